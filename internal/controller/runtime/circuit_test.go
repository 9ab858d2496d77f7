package runtime_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/fault"
)

// TestGardenerOutageOpensTheCircuit: while every Gardener call fails, the breaker opens
// (gardener_circuit_state 2) and stops calling; once Gardener answers again a probe closes it,
// and a runtime started during the outage reaches Ready after a manual retry.
func TestGardenerOutageOpensTheCircuit(t *testing.T) {
	if err := sim.SetFaults([]fault.Rule{{Name: "outage", Fault: fault.Fault{Type: fault.TypeStatus, Code: 503}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	rt := newRuntime(t, "outage-1")
	waitForCircuit(t, gardener.CircuitOpen)

	if err := sim.SetFaults(nil); err != nil {
		t.Fatal(err)
	}
	waitForCircuit(t, gardener.CircuitClosed)
	rt = waitForRuntime(t, rt, time.Minute, "a retry record", func(rt *infrav1.Runtime) bool { return rt.Status.Retry != nil || rt.Status.State == infrav1.StateReady })
	if rt.Status.State != infrav1.StateReady {
		patch := client.MergeFrom(rt.DeepCopy())
		rt.Annotations = map[string]string{infrav1.RetryRequestedAtAnnotation: time.Now().UTC().Format(time.RFC3339Nano)}
		if err := env.Client.Patch(t.Context(), rt, patch); err != nil {
			t.Fatal(err)
		}
	}
	waitForRuntime(t, rt, 2*time.Minute, "Ready after the outage", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
}

// waitForCircuit waits until gardener_circuit_state shows state.
func waitForCircuit(t *testing.T, state int) {
	t.Helper()
	var got float64
	err := testenv.Eventually(t.Context(), time.Minute, 100*time.Millisecond, func(context.Context) (bool, error) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return false, err
		}
		for _, f := range families {
			if f.GetName() == "infrastructure_manager_gardener_circuit_state" {
				got = f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return got == float64(state), nil
	})
	if err != nil {
		t.Fatalf("circuit state: got %v, want %d: %v", got, state, err)
	}
}
