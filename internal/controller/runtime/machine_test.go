package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// The tests of this file run both controllers' machines over the in-memory world on a fake
// clock, through the reconcilers the manager uses, with a stand-in for Gardener that finishes
// or stalls the shoots' operations. Every deadline is reached by moving the clock, so a test of
// a 30-minute deadline takes milliseconds.

// Deadlines and policy of the machine tests.
const (
	createDeadline     = 30 * time.Minute
	deleteDeadline     = 20 * time.Minute
	kubeconfigDeadline = 10 * time.Minute
)

// gardenerMode is what the stand-in for Gardener does with the shoots' operations.
type gardenerMode int

const (
	// finish completes every operation at once.
	finish gardenerMode = iota
	// stall leaves every operation Processing, and every deleted shoot in place.
	stall
)

// fleet is the manager in miniature: both reconcilers over one world.
type fleet struct {
	w        *world
	runtimes reconcile.Reconciler
	clusters *fsm.Reconciler[*infrav1.GardenerCluster]
	gardener gardenerMode
	// issue says whether the GardenerCluster controller is given kubeconfigs.
	issue bool
}

// newFleet wires the Runtime and GardenerCluster machines as Setup does, on the world's clock.
func newFleet(t *testing.T, w *world) *fleet {
	t.Helper()
	f := &fleet{w: w, gardener: finish, issue: true}
	cfg := w.steps.Config
	cfg.Retry = retry.Policy{Initial: 10 * time.Second, Factor: 2, Cap: 5 * time.Minute, MaxAttempts: 5}
	cfg.ShootCreateDeadline, cfg.ShootDeleteDeadline, cfg.KubeconfigDeadline = createDeadline, deleteDeadline, kubeconfigDeadline
	// The same options as Setup, but the recorder and the metrics.
	re, err := fsm.New(NewMachine(cfg), fsm.WithClock(w.clock), fsm.WithRand(func() float64 { return 0.5 }),
		fsm.WithLogValues(runtimeLogValues), fsm.WithRetryAnnotation(infrav1.RetryRequestedAtAnnotation),
		fsm.WithInputs(steps{Config: cfg}.inputs), fsm.WithChain(chainSteps, chainFor))
	if err != nil {
		t.Fatal(err)
	}
	f.runtimes = onePassReads(fsm.NewReconciler(w.kcp, re, func() *infrav1.Runtime { return &infrav1.Runtime{} }))
	ge, err := fsm.New(gardenercluster.NewMachine(gardenercluster.Config{
		EngineOptions: controller.EngineOptions{Retry: cfg.Retry}, Client: w.kcp, Kubeconfigs: f, Clock: w.clock,
	}), fsm.WithClock(w.clock), fsm.WithRand(func() float64 { return 0.5 }))
	if err != nil {
		t.Fatal(err)
	}
	f.clusters = fsm.NewReconciler(w.kcp, ge, func() *infrav1.GardenerCluster { return &infrav1.GardenerCluster{} })
	return f
}

// Shoot is the shoot in the world's garden, as Gardener's shoot cache has it; the world's shoots
// are always addressed.
func (f *fleet) Shoot(ctx context.Context, name string) (gardenercluster.ShootState, error) {
	shoot := &gardencorev1beta1.Shoot{}
	if err := f.w.garden.Get(ctx, types.NamespacedName{Namespace: testProject, Name: name}, shoot); err != nil {
		return gardenercluster.ShootState{}, err
	}
	return gardenercluster.ShootState{UID: shoot.UID, Addressed: true}, nil
}

// AdminKubeconfig issues the runtime cluster's kubeconfig, as Gardener would, while issue holds.
func (f *fleet) AdminKubeconfig(_ context.Context, _ string, lifetime time.Duration) ([]byte, time.Time, error) {
	if !f.issue {
		return nil, time.Time{}, retry.Transient("KubeconfigUnavailable", context.DeadlineExceeded)
	}
	return []byte(runtimeKubeconfig), f.w.clock.Now().Add(lifetime), nil
}

// pass reconciles rt and its GardenerCluster once, lets Gardener act, and returns how long the
// reconcilers asked to wait.
func (f *fleet) pass(t *testing.T, rt *infrav1.Runtime) time.Duration {
	t.Helper()
	key := types.NamespacedName{Namespace: rt.Namespace, Name: rt.Name}
	res, err := f.runtimes.Reconcile(t.Context(), reconcileRequest(key))
	if err != nil {
		t.Fatalf("reconcile Runtime: %v", err)
	}
	next := res.RequeueAfter
	gc := &infrav1.GardenerCluster{}
	if f.w.kcp.Get(t.Context(), types.NamespacedName{Namespace: rt.Namespace, Name: rt.Labels[infrav1.LabelRuntimeID]}, gc) == nil {
		res, err := f.clusters.Reconcile(t.Context(), reconcileRequest(client.ObjectKeyFromObject(gc)))
		if err != nil {
			t.Fatalf("reconcile GardenerCluster: %v", err)
		}
		if res.RequeueAfter > 0 && (next == 0 || res.RequeueAfter < next) {
			next = res.RequeueAfter
		}
	}
	f.act(t)
	return next
}

// act is Gardener: it finishes the shoots' operations, or leaves them as they are.
func (f *fleet) act(t *testing.T) {
	t.Helper()
	if f.gardener == stall {
		return
	}
	shoots := &gardencorev1beta1.ShootList{}
	if err := f.w.garden.List(t.Context(), shoots); err != nil {
		t.Fatal(err)
	}
	for i := range shoots.Items {
		s := &shoots.Items[i]
		if s.DeletionTimestamp != nil {
			s.Finalizers = nil
			if err := f.w.garden.Update(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if s.Status.ObservedGeneration == s.Generation && s.Status.LastOperation != nil {
			continue
		}
		operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)(s)
		if err := f.w.garden.Status().Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// run passes until done says the Runtime got where it should, moving the clock by what the
// reconcilers asked for, for at most limit of fake time; it returns the Runtime as stored.
func (f *fleet) run(t *testing.T, rt *infrav1.Runtime, limit time.Duration, done func(*infrav1.Runtime) bool) *infrav1.Runtime {
	t.Helper()
	end := f.w.clock.Now().Add(limit)
	for f.w.clock.Now().Before(end) {
		wait := f.pass(t, rt)
		stored := &infrav1.Runtime{}
		stored.Name, stored.Namespace = rt.Name, rt.Namespace
		if f.w.absent(f.w.kcp, stored) {
			return nil
		}
		if done(stored) {
			return stored
		}
		if wait <= 0 {
			wait = time.Second
		}
		f.w.clock.Step(wait)
	}
	stored := &infrav1.Runtime{}
	stored.Name, stored.Namespace = rt.Name, rt.Namespace
	f.w.get(f.w.kcp, stored)
	t.Fatalf("after %s: state %s, step %+v, retry %+v", limit, stored.Status.State, stored.Status.Step, stored.Status.Retry)
	return nil
}

func ready(rt *infrav1.Runtime) bool  { return rt.Status.State == infrav1.StateReady }
func failed(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed }

// TestMachineProvisionsAndDeprovisions takes a Runtime from nothing to Ready and back to
// nothing, through every step of the table, and checks what each cluster holds on the way.
func TestMachineProvisionsAndDeprovisions(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt)
	f := newFleet(t, w)

	stored := f.run(t, rt, time.Hour, ready)

	if !slices.Contains(stored.Finalizers, Finalizer) || !stored.Status.ProvisioningCompleted {
		t.Errorf("Ready runtime: finalizers %v, provisioning completed %v", stored.Finalizers, stored.Status.ProvisioningCompleted)
	}
	for _, typ := range []string{infrav1.ConditionProvisioned, infrav1.ConditionKubeconfigReady, infrav1.ConditionOidcConfigured, infrav1.ConditionConfigured} {
		if c := findCondition(stored, typ); c == nil || c.Status != "True" {
			t.Errorf("condition %s: %+v, want True", typ, c)
		}
	}
	if w.absent(w.garden, testShoot(rt)) {
		t.Error("no shoot in the garden")
	}
	ns := &corev1.Namespace{}
	ns.Name = KymaNamespace
	w.get(w.runtime, ns)

	if err := w.kcp.Delete(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	if got := f.run(t, rt, time.Hour, func(*infrav1.Runtime) bool { return false }); got != nil {
		t.Fatalf("the Runtime is still there: %+v", got.Status)
	}
	if !w.absent(w.garden, testShoot(rt)) {
		t.Error("the shoot is still there")
	}
	gc := testGardenerCluster("rid-rt", "rt")
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = kubeconfigSecretName(rt), rt.Namespace
	if !w.absent(w.kcp, gc) || !w.absent(w.kcp, secret) {
		t.Error("the GardenerCluster or the kubeconfig Secret is still there")
	}
}

// TestMachineDeadlines: a step that waits past its deadline fails the Runtime with
// StepTimedOut, in that step, once the deadline has passed and not before.
func TestMachineDeadlines(t *testing.T) {
	tests := []struct {
		name string
		// setUp changes the fleet so that step waits for ever; deleting deletes the Runtime once
		// it is Ready.
		setUp    func(*fleet)
		deleting bool
		step     string
		deadline time.Duration
	}{
		{name: "a shoot that stays Processing", setUp: func(f *fleet) { f.gardener = stall }, step: StepWaitForShoot, deadline: createDeadline},
		{name: "a kubeconfig that never comes", setUp: func(f *fleet) { f.issue = false }, step: StepWaitForKubeconfig, deadline: kubeconfigDeadline},
		{name: "a shoot that is never deleted", setUp: func(f *fleet) { f.gardener = stall }, deleting: true, step: StepWaitForShootDeletion, deadline: deleteDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			w := newWorld(t, rt)
			f := newFleet(t, w)
			if tt.deleting {
				stored := f.run(t, rt, time.Hour, ready)
				if err := w.kcp.Delete(t.Context(), stored); err != nil {
					t.Fatal(err)
				}
				// Gardener keeps the shoot while it deletes it.
				shoot := testShoot(rt)
				w.get(w.garden, shoot)
				shoot.Finalizers = []string{"gardener"}
				if err := w.garden.Update(t.Context(), shoot); err != nil {
					t.Fatal(err)
				}
			}
			tt.setUp(f)

			stored := f.run(t, rt, 3*tt.deadline, failed)

			if got := readyReason(stored); got != infrav1.ReasonStepTimedOut {
				t.Errorf("Ready reason %s, want %s: %+v", got, infrav1.ReasonStepTimedOut, stored.Status.Conditions)
			}
			if stored.Status.Step == nil || stored.Status.Step.Name != tt.step {
				t.Fatalf("step %+v, want %s", stored.Status.Step, tt.step)
			}
			waited := w.clock.Now().Sub(stored.Status.Step.EnteredAt.Time)
			if waited < tt.deadline || waited > tt.deadline+time.Minute {
				t.Errorf("timed out after %s in %s, want its deadline %s (plus at most a poll)", waited, tt.step, tt.deadline)
			}
			if !strings.Contains(findCondition(stored, infrav1.ConditionReady).Message, tt.step) {
				t.Errorf("the Ready message does not name the step: %q", findCondition(stored, infrav1.ConditionReady).Message)
			}
		})
	}
}

// readyReason is the reason of rt's Ready condition.
func readyReason(rt *infrav1.Runtime) string {
	if c := findCondition(rt, infrav1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// reconcileRequest asks for key to be reconciled.
func reconcileRequest(key types.NamespacedName) reconcile.Request {
	return reconcile.Request{NamespacedName: key}
}

// TestMachineReCheckWritesNothing: the periodic re-checks of a Ready runtime whose shoot did
// not drift read the garden and the runtime cluster, and write nothing, not even the Runtime's
// status. Each reads the kubeconfig Secret once, and the runtime cluster three times: the
// OpenIDConnects, the provisioning info and this manager's bindings. Upstream's bindings were
// read while the runtime was provisioned, and found absent: no re-check reads them again.
func TestMachineReCheckWritesNothing(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt)
	f := newFleet(t, w)
	f.run(t, rt, time.Hour, ready)

	w.resetCalls()
	end := w.clock.Now().Add(3 * time.Hour)
	passes, secretReads := 0, 0
	for ; w.clock.Now().Before(end); passes++ {
		// The GardenerCluster controller reads the Secret too: only the Runtime's reads count.
		before := w.reads("kcp", "Secret")
		res, err := f.runtimes.Reconcile(t.Context(), reconcileRequest(client.ObjectKeyFromObject(rt)))
		if err != nil {
			t.Fatal(err)
		}
		secretReads += w.reads("kcp", "Secret") - before
		if res.RequeueAfter <= 0 {
			t.Fatal("a Ready runtime asked for no re-check")
		}
		w.clock.Step(res.RequeueAfter)
	}

	stored := &infrav1.Runtime{}
	stored.Name, stored.Namespace = rt.Name, rt.Namespace
	w.get(w.kcp, stored)
	if !ready(stored) {
		t.Fatalf("the re-checks left the runtime %s", stored.Status.State)
	}
	rechecks := w.reads("runtime", "OpenIDConnect")
	if rechecks < 5 {
		t.Fatalf("%d passes in 3h re-checked %d times, want one every 30 minutes", passes, rechecks)
	}
	for _, store := range []string{"garden", "runtime", "kcp"} {
		if got := w.writes(store); len(got) > 0 {
			t.Errorf("%d passes wrote to %s: %q", passes, store, got)
		}
	}
	if secretReads != rechecks {
		t.Errorf("%d re-checks read the kubeconfig Secret %d times, want once each", rechecks, secretReads)
	}
	runtimeReads := w.reads("runtime", "OpenIDConnect") + w.reads("runtime", "ConfigMap") +
		w.reads("runtime", "ClusterRoleBinding") + w.reads("runtime", "Namespace")
	if runtimeReads != 3*rechecks {
		t.Errorf("%d re-checks read the runtime cluster %d times, want three each", rechecks, runtimeReads)
	}
}
