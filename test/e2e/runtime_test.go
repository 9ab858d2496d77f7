package e2e_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// lifecycleRules are the simulator's lifecycle rules by name. The simulator only takes the whole
// set, so scenarios add and remove theirs here.
var lifecycleRules = struct {
	sync.Mutex
	byName map[string]lifecycle.Rule
}{byName: map[string]lifecycle.Rule{}}

// setLifecycleRule installs (or replaces) one lifecycle rule.
func setLifecycleRule(t *testing.T, r lifecycle.Rule) {
	t.Helper()
	lifecycleRules.Lock()
	defer lifecycleRules.Unlock()
	lifecycleRules.byName[r.Name] = r
	applyLifecycleRules(t)
}

// removeLifecycleRule removes one lifecycle rule: operations that start afterwards succeed.
func removeLifecycleRule(t *testing.T, name string) {
	t.Helper()
	lifecycleRules.Lock()
	defer lifecycleRules.Unlock()
	delete(lifecycleRules.byName, name)
	applyLifecycleRules(t)
}

func applyLifecycleRules(t *testing.T) {
	t.Helper()
	rules := make([]lifecycle.Rule, 0, len(lifecycleRules.byName))
	for _, r := range lifecycleRules.byName {
		rules = append(rules, r)
	}
	slices.SortFunc(rules, func(a, b lifecycle.Rule) int { return strings.Compare(a.Name, b.Name) })
	if err := sys.sim.SetLifecycleRules(rules); err != nil {
		t.Fatal(err)
	}
}

// failingRuntime creates a Runtime whose shoot creation keeps failing with the Gardener error
// code until the rule named after the runtime is removed. The rule covers Create only, so the
// shoot could still be deleted.
func failingRuntime(t *testing.T, name string, code gardencorev1beta1.ErrorCode) *infrav1.Runtime {
	t.Helper()
	setLifecycleRule(t, lifecycle.Rule{
		Name: name, Shoot: name, Outcome: lifecycle.OutcomeFailed, Codes: []gardencorev1beta1.ErrorCode{code},
		Operations: []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate},
	})
	return newRuntime(t, name)
}

// newRuntime creates a Runtime from the upstream AWS fixture with its own name, shoot name and
// runtime id (rid-<name>). Runtimes are not deleted: the whole control plane is discarded at the
// end, and every assertion is keyed by runtime id, so one scenario's runtime cannot satisfy or
// spoil another's.
func newRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	return newRuntimeWith(t, name, nil)
}

// newRuntimeWith is newRuntime with the Runtime changed by change (when not nil) before it is
// created.
func newRuntimeWith(t *testing.T, name string, change func(*infrav1.Runtime)) *infrav1.Runtime {
	t.Helper()
	objs, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := sys.env.Client.Scheme().Convert(objs[0], rt, nil); err != nil {
		t.Fatal(err)
	}
	rt.Name, rt.Namespace, rt.Spec.Shoot.Name = name, namespace, name
	rt.Labels[infrav1.LabelShootName] = name
	rt.Labels[infrav1.LabelRuntimeID] = "rid-" + name
	// The example names Kubernetes 1.28.7, which current Gardener (and so the simulator) no
	// longer offers; the runtime gets the landscape's default version instead.
	rt.Spec.Shoot.Kubernetes.Version = nil
	rt.Spec.Shoot.SecretBindingName = "hyperscaler" // upstream's placeholder "hyperscaler secret" is no valid name; the simulated garden has "hyperscaler".
	if change != nil {
		change(rt)
	}
	if err := sys.env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// runtimeID returns the runtime id label, which the per-runtime alerts carry.
func runtimeID(rt *infrav1.Runtime) string { return rt.Labels[infrav1.LabelRuntimeID] }

// waitForRuntime polls the Runtime every 100 ms until cond holds, and returns it with the time
// the poll saw it.
func waitForRuntime(t *testing.T, rt *infrav1.Runtime, timeout time.Duration, what string, cond func(*infrav1.Runtime) bool) (*infrav1.Runtime, time.Time) {
	t.Helper()
	got := &infrav1.Runtime{}
	var seen time.Time
	err := testenv.Eventually(t.Context(), timeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := sys.env.Client.Get(ctx, client.ObjectKeyFromObject(rt), got); err != nil {
			return false, err
		}
		seen = time.Now()
		return cond(got), nil
	})
	if err != nil {
		t.Fatalf("runtime %s: %s: %v; status: %+v", rt.Name, what, err, got.Status)
	}
	return got, seen
}

// isFailed reports whether the runtime is Failed.
func isFailed(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed }

// readyReason returns the reason of the Ready condition.
func readyReason(rt *infrav1.Runtime) string {
	if c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// requestRetry sets the manual-retry annotation to a new value and returns the value.
func requestRetry(t *testing.T, rt *infrav1.Runtime) string {
	t.Helper()
	value := time.Now().UTC().Format(time.RFC3339Nano)
	patch := client.MergeFrom(rt.DeepCopy())
	if rt.Annotations == nil {
		rt.Annotations = map[string]string{}
	}
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = value
	if err := sys.env.Client.Patch(t.Context(), rt, patch); err != nil {
		t.Fatal(err)
	}
	return value
}
