package deploy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestUpstreamLeaseHolderKeepsTheManagerIdle runs the shipped manager beside a replica of
// upstream's manager, played by an elector of upstream's lease with upstream's identity form
// and timings (controller-runtime's defaults). While that replica holds the lease, the manager
// does nothing: a new Runtime gets no finalizer and no status, for longer than the lease lasts.
// Once the replica lets go, the manager takes both leases and provisions the Runtime; a replica
// of upstream's manager started then waits, and does not lead.
func TestUpstreamLeaseHolderKeepsTheManagerIdle(t *testing.T) {
	requireManager(t)
	ctx := t.Context()
	ns := installed.deployment.Namespace
	leases, err := coordinationv1client.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}

	// Upstream's replica leads before this manager starts, as on a landscape before the switch.
	run.stop()
	upstream := startUpstreamReplica(t, leases, ns, "kim-upstream-0")
	select {
	case <-upstream.leading:
	case <-time.After(time.Minute):
		t.Fatal("upstream's replica did not lead within a minute")
	}
	// The manager outlives the test, for the tests after it.
	if err := startManager(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	requireManager(t)

	rt := awsRuntime(t, "lease-upstream")
	if err := env.Client.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRuntimeAndWait(t, rt) })
	// Longer than the lease lasts (15s), so that a manager which only waited for the lease to
	// expire would have acted.
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
			t.Fatal(err)
		}
		if len(rt.Finalizers) > 0 || rt.Status.State != "" {
			t.Fatalf("the manager acted while upstream's replica leads: finalizers %v, state %q", rt.Finalizers, rt.Status.State)
		}
	}
	if got := holder(t, leases, ns, manager.UpstreamLeaderElectionID); got != "kim-upstream-0" {
		t.Fatalf("upstream's lease is held by %q, want upstream's replica", got)
	}

	upstream.stop()
	err = testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt)
		return rt.Status.State == infrav1.StateReady, err
	})
	if err != nil {
		t.Fatalf("runtime not Ready after upstream's replica let go: %v; state %q", err, rt.Status.State)
	}
	own, up := holder(t, leases, ns, manager.LeaderElectionID), holder(t, leases, ns, manager.UpstreamLeaderElectionID)
	if own == "" || own == "kim-upstream-0" || up != own {
		t.Errorf("leases held by %q (own) and %q (upstream's), want both by the manager", own, up)
	}

	// Upstream's replica started beside the leading manager waits: it does not lead for
	// longer than the lease lasts.
	second := startUpstreamReplica(t, leases, ns, "kim-upstream-1")
	select {
	case <-second.leading:
		t.Errorf("upstream's replica leads beside the manager (upstream's lease held by %q)", holder(t, leases, ns, manager.UpstreamLeaderElectionID))
	case <-time.After(20 * time.Second):
	}
	second.stop()
	requireManager(t)
}

// upstreamReplica is an elector of upstream's lease, as upstream's manager runs one.
type upstreamReplica struct {
	leading chan struct{}
	stop    func()
}

// startUpstreamReplica runs an elector of upstream's lease in ns under identity, with
// controller-runtime's default timings and release on stop, as upstream's manager has them.
// stop makes it let go and waits until it has.
func startUpstreamReplica(t *testing.T, leases coordinationv1client.LeasesGetter, ns, identity string) *upstreamReplica {
	t.Helper()
	r := &upstreamReplica{leading: make(chan struct{})}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: manager.UpstreamLeaderElectionID},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(r.leading) },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		elector.Run(ctx)
	}()
	r.stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	t.Cleanup(r.stop)
	return r
}

// holder is the holder of the lease name in ns; empty when it is free or missing.
func holder(t *testing.T, leases coordinationv1client.LeasesGetter, ns, name string) string {
	t.Helper()
	l, err := leases.Leases(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease %s/%s: %v", ns, name, err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// deleteRuntimeAndWait deletes rt and waits until the manager has deprovisioned it.
func deleteRuntimeAndWait(t *testing.T, rt *infrav1.Runtime) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	if err := env.Client.Delete(ctx, rt); client.IgnoreNotFound(err) != nil {
		t.Errorf("delete runtime %s: %v", rt.Name, err)
		return
	}
	err := testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
	})
	if err != nil {
		t.Errorf("runtime %s not deleted: %v", rt.Name, err)
	}
}
