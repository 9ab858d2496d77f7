package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
)

const (
	namespace       = "kcp-system"
	gardenNamespace = "garden-kyma"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// baselineOptions returns the baseline's options after parsing args as its command line does.
func baselineOptions(t *testing.T, args ...string) manager.Options {
	t.Helper()
	o := manager.DefaultOptions()
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return upstream(o)
}

// TestUpstreamOverridesTheResilienceSettings checks what the baseline runs with: Gardener at 5
// QPS burst 5, no circuit breaker, and a fixed 15s retry that never gives up, whatever the flags
// say. Its polls are exact and its shoots unwatched. The flags it does not override stand.
func TestUpstreamOverridesTheResilienceSettings(t *testing.T) {
	o := baselineOptions(t, "--gardener-qps=50", "--gardener-burst=100", "--gardener-circuit-threshold=3",
		"--retry-initial=1s", "--retry-jitter=0.5", "--retry-attempts=3", "--runtime-recheck-interval=5m")
	if o.GardenerQPS != 5 || o.GardenerBurst != 5 || o.GardenerCircuitThreshold != 0 {
		t.Errorf("rate limit %v/%d and circuit threshold %d, want 5/5 and 0 (never opens)", o.GardenerQPS, o.GardenerBurst, o.GardenerCircuitThreshold)
	}
	p := o.Retry
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Initial != 15*time.Second || p.Factor != 1 || p.Cap != 15*time.Second || p.Jitter != 0 || p.MaxDuration != 0 || p.MaxAttempts != math.MaxInt32 {
		t.Errorf("policy %+v, want upstream's fixed 15s without jitter or limits", p)
	}
	for _, attempt := range []int32{1, 2, 1000, math.MaxInt32 - 1} {
		if d := p.Delay(attempt, 0.99); d != 15*time.Second {
			t.Errorf("attempt %d: delay %s, want 15s", attempt, d)
		}
		if p.Exhausted(attempt, t0, t0.Add(365*24*time.Hour)) {
			t.Errorf("attempt %d a year after the first failure: exhausted, want never", attempt)
		}
	}
	if o.PollSpread != 0 || o.Polls == nil || !o.UnwatchedShoots {
		t.Errorf("poll spread %v, Polls set %t, unwatched shoots %t; want 0, true, true", o.PollSpread, o.Polls != nil, o.UnwatchedShoots)
	}
	if o.RuntimeRecheckInterval != 5*time.Minute {
		t.Errorf("re-check %s, want the flag's 5m", o.RuntimeRecheckInterval)
	}
}

// TestUpstreamPolls checks upstream's polls by step and shoot: 60s while Gardener creates the
// shoot (or has not started, or it is not visible), 30s while it reconciles it, 90s while it
// deletes it, and --poll-interval for other waiting steps.
func TestUpstreamPolls(t *testing.T) {
	op := func(typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState) *gardencorev1beta1.Shoot {
		return &gardencorev1beta1.Shoot{Status: gardencorev1beta1.ShootStatus{LastOperation: &gardencorev1beta1.LastOperation{Type: typ, State: state}}}
	}
	o := baselineOptions(t, "--poll-interval=20s")
	tests := []struct {
		name  string
		step  string
		shoot *gardencorev1beta1.Shoot
		want  time.Duration
	}{
		{"a shoot not visible yet", runtimectrl.StepWaitForShoot, nil, time.Minute},
		{"a shoot without an operation", runtimectrl.StepWaitForShoot, &gardencorev1beta1.Shoot{}, time.Minute},
		{"a shoot being created", runtimectrl.StepWaitForShoot, op(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStatePending), time.Minute},
		{"a creation in Error", runtimectrl.StepWaitForShoot, op(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateError), time.Minute},
		{"a shoot being reconciled", runtimectrl.StepWaitForShoot, op(gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateProcessing), 30 * time.Second},
		{"a failed reconciliation", runtimectrl.StepWaitForShoot, op(gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateFailed), 30 * time.Second},
		{"a shoot being deleted", runtimectrl.StepWaitForShootDeletion, op(gardencorev1beta1.LastOperationTypeDelete, gardencorev1beta1.LastOperationStateProcessing), 90 * time.Second},
		{"a kubeconfig Secret", runtimectrl.StepWaitForKubeconfig, nil, 20 * time.Second},
	}
	for _, tt := range tests {
		if got := o.Polls(tt.step, tt.shoot); got != tt.want {
			t.Errorf("%s: poll %s, want %s", tt.name, got, tt.want)
		}
	}
}

// testRuntime is a Runtime whose shoot is rt, provisioned in the garden project.
func testRuntime() *infrav1.Runtime {
	rt := &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: namespace, Generation: 1, UID: "uid-rt"}}
	rt.Spec.Shoot.Name = "rt"
	return rt
}

// testShoot is rt's shoot with its last operation.
func testShoot(typ gardencorev1beta1.LastOperationType) *gardencorev1beta1.Shoot {
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: gardenNamespace, Generation: 1}}
	s.Status.ObservedGeneration = 1
	s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: typ, State: gardencorev1beta1.LastOperationStateProcessing, Progress: 40}
	return s
}

// machineStep returns the step of the Runtime controller's machine named name, built with cfg.
func machineStep(t *testing.T, cfg runtimectrl.Config, name string) fsm.Step[*infrav1.Runtime] {
	t.Helper()
	for _, s := range runtimectrl.NewMachine(cfg).Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %s", name)
	return fsm.Step[*infrav1.Runtime]{}
}

// TestWaitForShootPollsAsUpstream runs the manager's WaitForShoot and WaitForShootDeletion with
// the baseline's options, under an engine with its poll spread. A shoot being created is read
// again after 60s exactly, each run reading it from the garden. A shoot being reconciled waits
// 30s, one being deleted 90s.
func TestWaitForShootPollsAsUpstream(t *testing.T) {
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	garden := fake.NewClientBuilder().WithScheme(scheme).WithObjects(testShoot(gardencorev1beta1.LastOperationTypeCreate)).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*gardencorev1beta1.Shoot); ok {
				reads++
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	// A --poll-interval of its own tells the steps' polls from the PollInterval they would use
	// without Polls.
	o := baselineOptions(t, "--poll-interval=20s")
	cfg := runtimectrl.Config{Garden: garden, GardenNamespace: gardenNamespace, Options: runtimectrl.Options{Polls: o.Polls, PollInterval: o.PollInterval}}
	wait := machineStep(t, cfg, runtimectrl.StepWaitForShoot)
	wait.Next, wait.Deadline = nil, time.Hour
	clock := clocktesting.NewFakeClock(t0)
	engine, err := fsm.New(fsm.Machine[*infrav1.Runtime]{Name: runtimectrl.ControllerName, Start: runtimectrl.StepWaitForShoot,
		Steps: []fsm.Step[*infrav1.Runtime]{wait}},
		fsm.WithClock(clock), fsm.WithRand(func() float64 { return 0.99 }), fsm.WithPollSpread(o.PollSpread))
	if err != nil {
		t.Fatal(err)
	}
	rt := testRuntime()
	for i := range 3 {
		if res := engine.Reconcile(t.Context(), rt); res.RequeueAfter != time.Minute {
			t.Fatalf("poll %d: requeue after %s, want 1m", i+1, res.RequeueAfter)
		}
		clock.Step(time.Minute)
	}
	if reads != 3 {
		t.Errorf("the shoot was read %d times in 3 polls, want 3", reads)
	}

	reconciled := testShoot(gardencorev1beta1.LastOperationTypeReconcile)
	reconciled.ResourceVersion = ""
	shoot := &gardencorev1beta1.Shoot{}
	if err := garden.Get(t.Context(), client.ObjectKeyFromObject(reconciled), shoot); err != nil {
		t.Fatal(err)
	}
	shoot.Status = reconciled.Status
	if err := garden.Update(t.Context(), shoot); err != nil {
		t.Fatal(err)
	}
	fsmtest.Check(t, wait.Run(t.Context(), testRuntime()), fsmtest.Wait(30*time.Second))

	deleting := machineStep(t, cfg, runtimectrl.StepWaitForShootDeletion)
	shoot.Status.LastOperation.Type = gardencorev1beta1.LastOperationTypeDelete
	if err := garden.Update(t.Context(), shoot); err != nil {
		t.Fatal(err)
	}
	fsmtest.Check(t, deleting.Run(t.Context(), testRuntime()), fsmtest.Wait(90*time.Second))
}

// inBackoff returns a Runtime whose step failed at failed and retries at next.
func inBackoff(name string, failed, next time.Time) *infrav1.Runtime {
	rt := testRuntime()
	rt.Name, rt.UID = name, types.UID("uid-"+name)
	rt.Status.Retry = &fsmv1.RetryStatus{Step: "Create", Attempt: 3, LastFailure: metav1.NewTime(failed), NextRetryAt: &metav1.Time{Time: next}}
	return rt
}

// TestForgetRetryTimes sets the retry times after now to now, of Runtimes and GardenerClusters
// alike, and leaves the rest of the retry record and any other object as they were.
func TestForgetRetryTimes(t *testing.T) {
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(5*time.Second + 300*time.Millisecond)
	gc := &infrav1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Name: "rid-gc", Namespace: namespace}}
	gc.Status.Retry = &fsmv1.RetryStatus{Step: "Rotate", Attempt: 1, LastFailure: metav1.NewTime(t0), NextRetryAt: &metav1.Time{Time: t0.Add(15 * time.Second)}}
	elsewhere := inBackoff("elsewhere", t0, t0.Add(15*time.Second))
	elsewhere.Namespace = "other"
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&infrav1.Runtime{}, &infrav1.GardenerCluster{}).WithObjects(
		inBackoff("pending", t0, t0.Add(15*time.Second)),
		inBackoff("due", t0.Add(-time.Minute), t0.Add(-45*time.Second)),
		testRuntime(), gc, elsewhere,
	).Build()

	n, err := forgetRetryTimes(t.Context(), c, namespace, now)
	if err != nil || n != 2 {
		t.Fatalf("forgot %d retry times (%v), want 2", n, err)
	}
	wantNext := map[string]time.Time{"pending": t0.Add(5 * time.Second), "due": t0.Add(-45 * time.Second)}
	for name, want := range wantNext {
		rt := &infrav1.Runtime{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, rt); err != nil {
			t.Fatal(err)
		}
		if r := rt.Status.Retry; r == nil || r.NextRetryAt == nil || !r.NextRetryAt.Time.Equal(want) || r.Attempt != 3 || r.Step != "Create" {
			t.Errorf("Runtime %s: retry %+v, want attempt 3 of Create, next at %s", name, r, want)
		}
	}
	rt := &infrav1.Runtime{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "rt"}, rt); err != nil || rt.Status.Retry != nil {
		t.Errorf("Runtime without a retry: retry %+v (%v), want none", rt.Status.Retry, err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(elsewhere), rt); err != nil || !rt.Status.Retry.NextRetryAt.Time.Equal(t0.Add(15*time.Second)) {
		t.Errorf("a Runtime of another namespace: retry %+v (%v), want it untouched", rt.Status.Retry, err)
	}
	got := &infrav1.GardenerCluster{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(gc), got); err != nil {
		t.Fatal(err)
	}
	if r := got.Status.Retry; r == nil || r.NextRetryAt == nil || !r.NextRetryAt.Time.Equal(t0.Add(5*time.Second)) || r.Attempt != 1 {
		t.Errorf("GardenerCluster: retry %+v, want attempt 1, next at %s", r, t0.Add(5*time.Second))
	}

	failing := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&infrav1.Runtime{}).
		WithObjects(inBackoff("pending", t0, t0.Add(15*time.Second))).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return errors.New("the API server is away")
		}}).Build()
	if _, err := forgetRetryTimes(t.Context(), failing, namespace, now); err == nil {
		t.Errorf("a failed patch: no error")
	}
}

// TestForgottenRetriesRunAtOnce restarts the baseline in the middle of a backoff. One engine
// schedules a retry, the baseline forgets its time at the restart, and an engine created then
// (the next process) runs the step at once, as a retry run and the next attempt. The retry the
// new engine schedules itself is honoured.
func TestForgottenRetriesRunAtOnce(t *testing.T) {
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	clock := clocktesting.NewFakeClock(t0)
	runs, retries := 0, 0
	m := fsm.Machine[*infrav1.Runtime]{
		Name: runtimectrl.ControllerName, Start: "Create",
		Steps: []fsm.Step[*infrav1.Runtime]{{Name: "Create", Run: func(ctx context.Context, _ *infrav1.Runtime) fsm.Outcome {
			runs++
			if fsm.IsRetry(ctx) {
				retries++
			}
			return fsm.Fail(errors.New("Gardener is busy"))
		}}},
		DefaultPolicy: upstreamPolicy,
	}
	first, err := fsm.New(m, fsm.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	rt := testRuntime()
	if res := first.Reconcile(t.Context(), rt); res.RequeueAfter != 15*time.Second {
		t.Fatalf("first failure: requeue after %s, want 15s", res.RequeueAfter)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&infrav1.Runtime{}).Build()
	status := rt.Status
	if err := c.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt.Status = status
	if err := c.Status().Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}

	clock.Step(5 * time.Second)
	if n, err := forgetRetryTimes(t.Context(), c, namespace, clock.Now()); err != nil || n != 1 {
		t.Fatalf("forgot %d retry times (%v), want 1", n, err)
	}
	rt = &infrav1.Runtime{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "rt"}, rt); err != nil {
		t.Fatal(err)
	}
	second, err := fsm.New(m, fsm.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if res := second.Reconcile(t.Context(), rt); runs != 2 || retries != 1 || res.RequeueAfter != 15*time.Second {
		t.Fatalf("after the restart: %d runs, %d retry runs, requeue after %s; want 2, 1, 15s", runs, retries, res.RequeueAfter)
	}
	if r := rt.Status.Retry; r == nil || r.Attempt != 2 || r.NextRetryAt == nil {
		t.Errorf("retry record %+v, want attempt 2 with a next retry", r)
	}
	if res := second.Reconcile(t.Context(), rt); runs != 2 || res.RequeueAfter != 15*time.Second {
		t.Errorf("the second engine ran its own retry early (%d runs, requeue after %s)", runs, res.RequeueAfter)
	}
}
