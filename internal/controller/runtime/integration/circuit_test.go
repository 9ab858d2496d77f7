package integration_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// outageRuntimes is how many runtimes start during the outage.
const outageRuntimes = 4

// TestGardenerOutagePausesBudgets keeps Gardener answering 503 to every call for longer than
// the whole retry budget of the runtimes that start during it. The breaker opens, and from
// then on no call reaches Gardener but the half-open probes; the runtimes pause instead of
// spending attempts, so none ends Failed; and once Gardener is back and a probe closes the
// circuit, they are released within the release window and are Ready one operation later,
// without a manual retry.
func TestGardenerOutagePausesBudgets(t *testing.T) {
	o := managerOptions()
	watch := watchStates(t)
	var rts []*infrav1.Runtime
	for i := range outageRuntimes {
		rts = append(rts, newRuntime(t, fmt.Sprintf("outage-%d", i)))
	}
	// The outage begins once the manager works on them (its caches are synced).
	for _, rt := range rts {
		waitForRuntime(t, rt, 30*time.Second, "a step", func(rt *infrav1.Runtime) bool { return rt.Status.Step != nil })
	}
	if err := sim.SetFaults([]fault.Rule{{Name: "outage", Fault: fault.Fault{Type: fault.TypeStatus, Code: 503}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	waitForCircuit(t, gardenclient.CircuitOpen)
	opened, before := time.Now(), gardenCalls(t)

	// The whole budget: every attempt at the longest delay.
	budget := time.Duration(o.Retry.MaxAttempts) * o.Retry.Cap
	outage := budget + 2*o.GardenerCircuitCooldown
	// Each runtime's next Gardener call pauses it, or its GardenerCluster when the shoot was
	// created before the outage and the admin kubeconfig is what it needs next.
	for _, rt := range rts {
		err := testenv.Eventually(t.Context(), 30*time.Second, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			return pausedOrWaitingForPaused(ctx, rt)
		})
		if err != nil {
			t.Fatalf("%s: neither it nor its GardenerCluster paused: %v", rt.Name, err)
		}
	}
	time.Sleep(time.Until(opened.Add(outage))) // the outage under test: its length is the point
	during := diffCalls(before, gardenCalls(t))
	var reached float64
	for _, n := range during {
		reached += n
	}
	// One probe per cooldown at most, and one more for a probe under way when the window began.
	probes := float64(time.Since(opened)/o.GardenerCircuitCooldown) + 1
	t.Logf("Gardener calls during the %s the circuit was open (cooldown %s): %v", time.Since(opened).Round(time.Second), o.GardenerCircuitCooldown, during)
	if reached > probes {
		t.Errorf("%v calls reached Gardener while the circuit was open, want at most %v half-open probes: %v", reached, probes, during)
	}

	if err := sim.SetFaults(nil); err != nil {
		t.Fatal(err)
	}
	recovered := time.Now()
	waitForCircuit(t, gardenclient.CircuitClosed)
	closed := time.Now()
	// Released within the window (after the gate's next look, at most a poll of a second later),
	// not after a backoff grown during the outage.
	release := o.GardenerReleaseWindow + 2*time.Second
	for _, rt := range rts {
		err := testenv.Eventually(t.Context(), release+5*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
			paused, err := pausedOrWaitingForPaused(ctx, rt)
			return !paused, err
		})
		if err != nil {
			t.Fatalf("%s still paused %s after the circuit closed (release window %s): %v", rt.Name, time.Since(closed), o.GardenerReleaseWindow, err)
		}
	}
	t.Logf("all %d runtimes released %s after the circuit closed (release window %s)", len(rts), time.Since(closed).Round(100*time.Millisecond), o.GardenerReleaseWindow)
	// Then Ready after one shoot operation (2s here, plus a kube-apiserver per shoot cluster) and
	// the steps after it.
	for _, rt := range rts {
		rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after the outage", func(rt *infrav1.Runtime) bool {
			return rt.Status.State == infrav1.StateReady
		})
		if rt.Annotations[infrav1.RetryRequestedAtAnnotation] != "" {
			t.Fatalf("%s: a manual retry was requested", rt.Name)
		}
	}
	t.Logf("all %d runtimes Ready %s after Gardener came back (release window %s)", len(rts), time.Since(recovered).Round(100*time.Millisecond), o.GardenerReleaseWindow)
	if failed := watch(); len(failed) > 0 {
		t.Errorf("runtimes were Failed during or after the outage: %v", failed)
	}
}

// pausedOrWaitingForPaused reports whether the runtime's step is paused, or it waits for its
// kubeconfig and its GardenerCluster's step is paused.
func pausedOrWaitingForPaused(ctx context.Context, rt *infrav1.Runtime) (bool, error) {
	paused := func(r *infrav1.RetryStatus) bool { return r != nil && r.Class == string(retry.ClassPaused) }
	got := &infrav1.Runtime{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), got); err != nil {
		return false, err
	}
	if paused(got.Status.Retry) {
		return true, nil
	}
	gc := &infrav1.GardenerCluster{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: rt.Labels[infrav1.LabelRuntimeID]}, gc)
	if err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return paused(gc.Status.Retry), nil
}

// watchStates polls the Runtimes of the namespace until the test ends and returns a function
// that reports which of them were ever seen Failed, with the Ready message.
func watchStates(t *testing.T) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	failed := map[string]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list := &infrav1.RuntimeList{}
			if err := env.Client.List(ctx, list, client.InNamespace("kcp-system")); err == nil {
				mu.Lock()
				for _, rt := range list.Items {
					if rt.Status.State == infrav1.StateFailed {
						msg := ""
						if c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady); c != nil {
							msg = c.Message
						}
						failed[rt.Name] = msg
					}
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for name, msg := range failed {
			if len(name) >= 6 && name[:6] == "outage" {
				out = append(out, name+": "+msg)
			}
		}
		return out
	}
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
