package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"unicode"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// kindFootprint is the heap one object of an informer kind takes: as decoded from the API
// server, and as the manager's cache keeps it, after its transform.
type kindFootprint struct {
	kind    string
	objects int
	// decoded and cached are bytes per object.
	decoded, cached float64
}

// footprintKind is a kind the manager caches, where it lives, the transform its cache
// applies, and which of its objects it holds (all when selector is empty).
type footprintKind struct {
	kind      string
	list      func() client.ObjectList
	reader    client.Reader
	namespace string
	transform func(any) (any, error)
	selector  client.MatchingLabels
}

// cacheFootprint measures, per kind the manager caches, how much heap the fleet of run r takes
// decoded and transformed: the informers of one manager hold exactly these objects. The
// objects are decoded one by one, as an informer stores them, and weighed in copies of at least
// footprintCopies objects.
func (s *suite) cacheFootprint(ctx context.Context, r run) ([]kindFootprint, error) {
	garden := "garden-" + r.name
	kinds := []footprintKind{
		{"Runtime", func() client.ObjectList { return &infrav1.RuntimeList{} }, s.cp, r.name, manager.ControlPlaneTransform, nil},
		{"GardenerCluster", func() client.ObjectList { return &infrav1.GardenerClusterList{} }, s.cp, r.name, manager.ControlPlaneTransform, nil},
		{"Shoot", func() client.ObjectList { return &gardencorev1beta1.ShootList{} }, s.garden, garden, gardenclient.Transform, nil},
		{"ConfigMap (garden)", func() client.ObjectList { return &corev1.ConfigMapList{} }, s.garden, garden, gardenclient.Transform, nil},
		// The Runtime controller's watch of the kubeconfig Secrets keeps each parsed, without
		// the kubeconfig (runtimectrl.KubeconfigSecrets).
		{"Secret (kubeconfig)", func() client.ObjectList { return &corev1.SecretList{} }, s.cp, r.name, runtimectrl.KubeconfigSecretTransform,
			client.MatchingLabels{infrav1.LabelKymaManagedBy: gardenercluster.ManagedBy}},
	}
	out := make([]kindFootprint, 0, len(kinds))
	for _, k := range kinds {
		// One object of each kind is kept beside the profiles: what the heap profile weighs.
		sample := filepath.Join(profileDir(s.dir), "sample-"+sampleName(k.kind)+".json")
		f, err := measureKind(ctx, k, sample)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// footprintCopies is how many objects measureKind weighs at least: the copies of a small
// fleet (the short profile's six) are weighed together, so that what the rest of the process
// allocates meanwhile is a small part of the difference.
const footprintCopies = 4000

// sampleName is a kind's name as part of a file name: "ConfigMap (garden)" is configmap-garden.
func sampleName(kind string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r):
			return unicode.ToLower(r)
		case r == ' ':
			return '-'
		}
		return -1
	}, kind), "-")
}

// measureKind lists one kind and weighs its objects before and after the transform. It writes
// the first object, as the API server served it, to the file sample.
func measureKind(ctx context.Context, k footprintKind, sample string) (kindFootprint, error) {
	f := kindFootprint{kind: k.kind}
	listed, err := listApart(ctx, k)
	if err != nil {
		return f, err
	}
	f.objects = len(listed)
	if f.objects == 0 {
		return f, fmt.Errorf("footprint: no %s in %s", k.kind, k.namespace)
	}
	n := max(footprintCopies, len(listed))
	raw := make([][]byte, 0, len(listed))
	for _, o := range listed {
		data, err := json.Marshal(o)
		if err != nil {
			return f, fmt.Errorf("footprint: encode %s: %w", k.kind, err)
		}
		raw = append(raw, data)
	}
	first, err := json.Marshal(withoutSecretData(listed[0]))
	if err != nil {
		return f, fmt.Errorf("footprint: sample of %s: %w", k.kind, err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, first, "", "  "); err != nil {
		return f, fmt.Errorf("footprint: sample of %s: %w", k.kind, err)
	}
	if err := os.WriteFile(sample, indented.Bytes(), 0o600); err != nil {
		return f, fmt.Errorf("footprint: sample of %s: %w", k.kind, err)
	}
	// Only the copies decoded below may come and go between the readings: the list is dropped
	// before the first, and the encoded objects are kept until the last. A fleet of 5,000 freed
	// in between measured less than nothing.
	typ := reflect.TypeOf(listed[0]).Elem()
	listed = nil //nolint:ineffassign,wastedassign // dropped before the first reading, on purpose.
	objs := make([]client.Object, n)
	base := liveHeap()
	for i := range objs {
		// Decoded afresh into an empty object, as an informer decodes each object it receives.
		o := reflect.New(typ).Interface().(client.Object)
		if err := json.Unmarshal(raw[i%len(raw)], o); err != nil {
			return f, fmt.Errorf("footprint: decode %s: %w", k.kind, err)
		}
		objs[i] = o
	}
	decoded := liveHeap()
	for i, o := range objs {
		t, err := k.transform(o)
		if err != nil {
			return f, fmt.Errorf("footprint: transform %s: %w", k.kind, err)
		}
		objs[i] = t.(client.Object)
	}
	// The transform works in place; what it dropped is garbage now.
	cached := liveHeap()
	runtime.KeepAlive(objs)
	runtime.KeepAlive(raw)
	f.decoded = float64(int64(decoded)-int64(base)) / float64(n)
	f.cached = float64(int64(cached)-int64(base)) / float64(n)
	return f, nil
}

// listApart lists a kind and copies each item into an object of its own, dropping the list.
func listApart(ctx context.Context, k footprintKind) ([]client.Object, error) {
	list := k.list()
	if err := k.reader.List(ctx, list, client.InNamespace(k.namespace), k.selector); err != nil {
		return nil, fmt.Errorf("footprint: list %s: %w", k.kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("footprint: items of %s: %w", k.kind, err)
	}
	objs := make([]client.Object, 0, len(items))
	for _, item := range items {
		objs = append(objs, item.DeepCopyObject().(client.Object))
	}
	return objs, nil
}

// withoutSecretData is o, or a copy of it with each value of a Secret's data replaced by its
// size: a sample holds no credentials.
func withoutSecretData(o client.Object) client.Object {
	secret, ok := o.(*corev1.Secret)
	if !ok {
		return o
	}
	redacted := secret.DeepCopy()
	for k, v := range redacted.Data {
		redacted.Data[k] = fmt.Appendf(nil, "(%d bytes, not kept)", len(v))
	}
	return redacted
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
