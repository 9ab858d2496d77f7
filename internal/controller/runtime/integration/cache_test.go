package integration_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestCacheHoldsNoManagedFields provisions a runtime and reads its Runtime and GardenerCluster
// through the manager's client: the API server keeps their managedFields, the manager's cache
// keeps the objects without them (no step reads them, and they are up to half of each object).
func TestCacheHoldsNoManagedFields(t *testing.T) {
	rt := newRuntime(t, "cache-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	objects := []client.Object{&infrav1.Runtime{}, &infrav1.GardenerCluster{}}
	keys := []client.ObjectKey{client.ObjectKeyFromObject(rt), {Namespace: rt.Namespace, Name: rt.Labels[infrav1.LabelRuntimeID]}}
	for i, obj := range objects {
		key := keys[i]
		if err := env.Client.Get(t.Context(), key, obj); err != nil {
			t.Fatal(err)
		}
		if len(obj.GetManagedFields()) == 0 {
			t.Fatalf("%T %s has no managedFields on the API server: the check below would check nothing", obj, key)
		}
		cached := obj.DeepCopyObject().(client.Object)
		err := testenv.Eventually(t.Context(), 30*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
			return managerClient.Get(ctx, key, cached) == nil, nil
		})
		if err != nil {
			t.Fatalf("%T %s not in the manager's cache: %v", obj, key, err)
		}
		if n := len(cached.GetManagedFields()); n != 0 {
			t.Errorf("%T %s in the manager's cache has %d managedFields entries, want none", obj, key, n)
		}
	}
}
