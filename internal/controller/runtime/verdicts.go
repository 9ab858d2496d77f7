package runtime

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"sync"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// verdicts remembers, per Runtime, on which inputs a step last found that it had nothing to
// write. Rendering what a step wants and comparing it with what is there is most of a quiet
// re-check's CPU: the shoot's render and drift check; the structured authentication
// configuration, which is encoded, decoded and validated with Kubernetes' own validation; the
// provisioning info, which is encoded as YAML. While the inputs are those of the last verdict
// (the Runtime's resourceVersion, those of the objects the step compares with, and whatever
// else the render reads), the verdict stands and the step skips both. A change of any input, or
// a new process, renders again.
type verdicts struct {
	m sync.Map // types.NamespacedName -> runtimeVerdicts
}

// verdictStep is a step that keeps verdicts.
type verdictStep uint8

const (
	verdictShoot verdictStep = iota
	verdictAuthentication
	verdictProvisioningInfo
	verdictSteps
)

// runtimeVerdicts are one Runtime's verdicts: per step, a digest of the inputs it was reached on
// (zero: none). A digest of 128 bits keeps a fleet's verdicts small, with no practical chance
// that other inputs match it.
type runtimeVerdicts struct {
	uid types.UID
	on  [verdictSteps]inputsDigest
}

// inputsDigest is the digest of a verdict's inputs.
type inputsDigest [16]byte

// digestOf returns the digest of the inputs on.
func digestOf(on string) inputsDigest {
	h := fnv.New128a()
	_, _ = h.Write([]byte(on)) // A hash never fails to write.
	var d inputsDigest
	h.Sum(d[:0])
	return d
}

// holds reports whether step found nothing to write for rt on the inputs on. A nil verdicts
// remembers nothing, and an input without a version ("" on) never matches.
func (v *verdicts) holds(step verdictStep, rt *infrav1.Runtime, on string) bool {
	if v == nil || on == "" {
		return false
	}
	got, ok := v.m.Load(client.ObjectKeyFromObject(rt))
	if !ok {
		return false
	}
	r := got.(runtimeVerdicts)
	return r.uid == rt.UID && r.on[step] == digestOf(on)
}

// found records that step found nothing to write for rt on the inputs on. The calls for one
// Runtime come one after another (the controller reconciles a Runtime in one worker at a time),
// so the read and the store below do not race for it.
func (v *verdicts) found(step verdictStep, rt *infrav1.Runtime, on string) {
	if v == nil || on == "" {
		return
	}
	key := client.ObjectKeyFromObject(rt)
	r := runtimeVerdicts{uid: rt.UID}
	if got, ok := v.m.Load(key); ok && got.(runtimeVerdicts).uid == rt.UID {
		r = got.(runtimeVerdicts)
	}
	r.on[step] = digestOf(on)
	v.m.Store(key, r)
}

// forget drops what is remembered of rt.
func (v *verdicts) forget(rt *infrav1.Runtime) {
	if v != nil {
		v.m.Delete(client.ObjectKeyFromObject(rt))
	}
}

// versionsOf joins the resourceVersions (with the uids) of rt and objs, and extra, into the
// inputs of a verdict: "" when any of them has no resourceVersion, so that it never matches.
func versionsOf(rt *infrav1.Runtime, objs []client.Object, extra ...string) string {
	if rt.ResourceVersion == "" {
		return ""
	}
	on := rt.ResourceVersion
	for _, o := range objs {
		if o == nil || o.GetResourceVersion() == "" {
			return ""
		}
		on += "|" + string(o.GetUID()) + "/" + o.GetResourceVersion()
	}
	for _, e := range extra {
		on += "|" + e
	}
	return on
}

// shootVerdict is what ApplyShoot's verdict is reached on: the Runtime, the landscape inputs'
// fingerprint, and of the shoot as Gardener has it what the drift check compares: its spec, by
// its generation (Gardener increases it with every change of the spec), and its labels and
// annotations, by a digest of those the garden cache keeps. A change of the shoot's status
// leaves the verdict standing, so it is the same on the cached shoot, which has no spec to
// compare (gardener.TrimShoot), and on the shoot read from Gardener. A shoot without a
// generation (no shoot Gardener serves) is taken by its resourceVersion.
func shootVerdict(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, inputs string) string {
	if shoot == nil {
		return ""
	}
	if shoot.Generation == 0 {
		return versionsOf(rt, []client.Object{shoot}, inputs)
	}
	return versionsOf(rt, nil, string(shoot.UID)+"/"+strconv.FormatInt(shoot.Generation, 10)+"/"+metadataDigest(shoot), inputs)
}

// metadataDigest is a digest of the labels and annotations of shoot that the garden cache keeps
// (all but Gardener's own, gardener.OwnKey).
func metadataDigest(shoot *gardencorev1beta1.Shoot) string {
	h := fnv.New64a()
	for i, m := range []map[string]string{shoot.Labels, shoot.Annotations} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !gardener.OwnKey(k) {
				fmt.Fprintf(h, "%d\x00%s\x00%s\x00", i, k, m[k])
			}
		}
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
