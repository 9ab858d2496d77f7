package fsm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestSeriesAreKeptPerController runs two engines on one set of metrics, as the manager's two
// controllers do, over objects of the same name (a Runtime named like its runtime id, and its
// GardenerCluster). When the second engine forgets its object, the first one's series stay.
func TestSeriesAreKeptPerController(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics := fsm.NewMetrics(reg)
	labels := fsm.WithObjectMetrics(func(o client.Object) fsm.ObjectLabels {
		return fsm.ObjectLabels{ID: o.GetName(), Name: o.GetName(), Shoot: "shoot-1"}
	})
	failing := func(name, step string) *fsm.Engine[*infrav1.Runtime] {
		t.Helper()
		e, err := fsm.New(fsm.Machine[*infrav1.Runtime]{
			Name: name, Start: step,
			Steps: []fsm.Step[*infrav1.Runtime]{{Name: step, Run: func(context.Context, *infrav1.Runtime) fsm.Outcome {
				return fsm.Fail(retry.Terminal("InfraUnauthorized", errors.New("denied")))
			}}},
		}, fsm.WithMetrics(metrics), labels)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	runtimes, clusters := failing("runtime", "ApplyShoot"), failing("gardenercluster", "EnsureKubeconfig")
	obj := func() *infrav1.Runtime {
		return &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "rid-1", Generation: 1, UID: "u"}}
	}
	rt, gc := obj(), obj()
	for range 2 {
		runtimes.Reconcile(t.Context(), rt)
		clusters.Reconcile(t.Context(), gc)
	}
	if rt.Status.State != infrav1.StateFailed {
		t.Fatalf("state %s, want Failed", rt.Status.State)
	}
	if n := testutil.CollectAndCount(reg, "infrastructure_manager_runtime_failed"); n != 2 {
		t.Fatalf("%d runtime_failed series, want one per object", n)
	}
	clusters.Forget(types.NamespacedName{Namespace: "kcp-system", Name: "rid-1"})
	if n := testutil.CollectAndCount(reg, "infrastructure_manager_runtime_failed"); n != 1 {
		t.Errorf("the GardenerCluster's engine forgot its object and took the Runtime's runtime_failed series with it (%d left)", n)
	}
	runtimes.Forget(types.NamespacedName{Namespace: "kcp-system", Name: "rid-1"})
	if n := testutil.CollectAndCount(reg, "infrastructure_manager_runtime_failed"); n != 0 {
		t.Errorf("%d runtime_failed series left after both objects are gone", n)
	}
}
