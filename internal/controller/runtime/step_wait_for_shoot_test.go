package runtime

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// operation sets the shoot's last operation as Gardener reports it for the current generation.
func operation(typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState, codes ...gardencorev1beta1.ErrorCode) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Status.ObservedGeneration = s.Generation
		s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: typ, State: state, Progress: 40, Description: string(typ) + " " + string(state)}
		if len(codes) > 0 {
			s.Status.LastErrors = []gardencorev1beta1.LastError{{Description: "the provider said no", Codes: codes}}
		}
	}
}

// setShootStatus applies ApplyShoot for rt, then gives its shoot the status that status sets, as
// Gardener writes it.
func setShootStatus(t *testing.T, w *world, rt *infrav1.Runtime, status func(*gardencorev1beta1.Shoot)) *gardencorev1beta1.Shoot {
	t.Helper()
	if out := w.steps.applyShoot(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
		t.Fatal("apply shoot")
	}
	shoot := testShoot(rt)
	w.get(w.garden, shoot)
	if status == nil {
		return shoot
	}
	status(shoot)
	if err := w.garden.Status().Update(t.Context(), shoot); err != nil {
		t.Fatal(err)
	}
	return shoot
}

// TestWaitForShoot covers what WaitForShoot makes of each state Gardener reports.
func TestWaitForShoot(t *testing.T) {
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// noShoot leaves the shoot out; status is what Gardener reports for it otherwise.
		noShoot bool
		status  func(*gardencorev1beta1.Shoot)
		// annotations are set on the shoot's metadata, which a status update leaves alone.
		annotations map[string]string
		faults      []fault
		want        fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// provisioned is whether the Provisioned condition is True afterwards.
		provisioned bool
	}{
		{
			name: "a shoot the cache has not seen yet is waited for", noShoot: true,
			reason: "a shoot just applied may not be in the cache yet; the Ready message says so",
			want:   fsmtest.Wait(30 * time.Second),
			says:   "shoot rt is not visible yet",
		},
		{
			name:   "a shoot without an operation is waited for",
			reason: "Gardener has not started yet; the Ready message says so",
			want:   fsmtest.Wait(30 * time.Second),
			says:   "Waiting for Gardener to start an operation",
		},
		{
			name:   "an operation of an older generation is waited for",
			reason: "a succeeded operation of an older spec says nothing of the current one; the Ready message says so",
			status: func(s *gardencorev1beta1.Shoot) {
				operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)(s)
				s.Status.ObservedGeneration = s.Generation - 1
			},
			want: fsmtest.Wait(30 * time.Second),
			says: "Waiting for Gardener to observe generation",
		},
		{
			name:   "a processing operation is waited for",
			reason: "users follow Gardener's operation in the Ready message",
			status: operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing),
			want:   fsmtest.Wait(30 * time.Second),
			says:   "Gardener operation Create is Processing",
		},
		{
			name:   "an operation in Error is Gardener's to retry",
			reason: "Gardener retries an Error itself, so it is no failure; the Ready message says so",
			status: operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateError),
			want:   fsmtest.Wait(30 * time.Second),
			says:   "Create Error, Gardener retries",
		},
		{
			name:   "a succeeded operation moves on",
			reason: "the Provisioned condition is set when the shoot is ready",
			status: operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded),
			want:   fsmtest.Next(StepEnsureGardenerCluster), provisioned: true,
		},
		{
			name:   "a failure no retry changes is the user's",
			reason: "Gardener's user error codes fail the Runtime at once",
			status: operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed, gardencorev1beta1.ErrorInfraUnauthorized),
			want:   fsmtest.Terminal("InfraUnauthorized"),
		},
		{
			name:   "a failure that may pass is first reported to the engine",
			reason: "the engine's retry budget decides how often Gardener is asked to retry",
			status: operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed, gardencorev1beta1.ErrorInfraQuotaExceeded),
			want:   fsmtest.Transient("InfraQuotaExceeded"),
		},
		{
			name:        "a retry Gardener has not picked up yet is waited for",
			reason:      "the old failure must not count again while the retry is pending; the Ready message says so",
			status:      operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed, gardencorev1beta1.ErrorInfraQuotaExceeded),
			annotations: map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.ShootOperationRetry},
			want:        fsmtest.Wait(30 * time.Second),
			says:        "Gardener has not yet picked up the retry",
		},
		{
			name:   "a failed read is retried",
			reason: "an unreadable shoot is no state of Gardener's",
			faults: []fault{{store: "garden", verb: "get", kind: "Shoot", err: apierrors.NewInternalError(context.DeadlineExceeded)}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonInternalError),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			w := newWorld(t, rt)
			if !tt.noShoot {
				shoot := setShootStatus(t, w, rt, tt.status)
				if tt.annotations != nil {
					maps.Copy(shoot.Annotations, tt.annotations)
					if err := w.garden.Update(t.Context(), shoot); err != nil {
						t.Fatal(err)
					}
				}
			}
			w.fail(tt.faults...)
			w.resetCalls()

			out := w.steps.waitForShoot(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			c := findCondition(rt, infrav1.ConditionProvisioned)
			if got := c != nil && c.Status == "True"; got != tt.provisioned {
				t.Errorf("Provisioned condition %+v, want True: %v", c, tt.provisioned)
			}
			checkWrites(t, w, "garden")
			if tt.status != nil && (rt.Status.Gardener == nil || rt.Status.ShootLastOperation == nil) {
				t.Errorf("Gardener's status is not mirrored: %+v, upstream's %+v", rt.Status.Gardener, rt.Status.ShootLastOperation)
			}
		})
	}
}

// TestWaitForShootAsksGardenerToRetry runs WaitForShoot under the engine, on a fake clock: a
// quota failure is counted as attempt 1, and the retry run the engine starts after the backoff
// asks Gardener to retry the operation (gardener.cloud/operation=retry) and waits for it.
func TestWaitForShootAsksGardenerToRetry(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt)
	setShootStatus(t, w, rt, operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed, gardencorev1beta1.ErrorInfraQuotaExceeded))
	engine, err := fsm.New(fsm.Machine[*infrav1.Runtime]{
		Name: ControllerName, Start: StepWaitForShoot,
		Steps:         []fsm.Step[*infrav1.Runtime]{{Name: StepWaitForShoot, Run: w.steps.waitForShoot, Deadline: time.Hour}},
		DefaultPolicy: retry.Policy{Initial: time.Minute, Factor: 2, Cap: time.Hour, MaxAttempts: 5},
	}, fsm.WithClock(w.clock))
	if err != nil {
		t.Fatal(err)
	}

	engine.Reconcile(t.Context(), rt)
	if r := rt.Status.Retry; r == nil || r.Attempt != 1 || r.Reason != "InfraQuotaExceeded" {
		t.Fatalf("after the failure: retry record %+v, want attempt 1 of InfraQuotaExceeded", r)
	}
	if got := w.writes("garden"); len(got) != 1 {
		t.Fatalf("garden writes before the retry %q, want only the shoot's apply", got)
	}
	w.clock.Step(rt.Status.Retry.NextRetryAt.Sub(w.clock.Now()) + time.Second)
	w.resetCalls()
	engine.Reconcile(t.Context(), rt)

	shoot := testShoot(rt)
	w.get(w.garden, shoot)
	if got := shoot.Annotations[v1beta1constants.GardenerOperation]; got != v1beta1constants.ShootOperationRetry {
		t.Errorf("operation annotation %q, want %q", got, v1beta1constants.ShootOperationRetry)
	}
	if got := w.writes("garden"); len(got) != 1 || got[0] != "patch Shoot" {
		t.Errorf("garden writes of the retry run %q, want one patch", got)
	}
	if rt.Status.State == infrav1.StateFailed {
		t.Errorf("the Runtime failed on the retry run: %+v", rt.Status)
	}
}

// polled records the calls of a Config.Polls and answers each with after.
type polled struct {
	after time.Duration
	calls []polledCall
}

// polledCall is one call of a Config.Polls: the step, and the shoot it passed (nil for none).
type polledCall struct {
	step  string
	shoot *gardencorev1beta1.Shoot
}

func (p *polled) polls(step string, shoot *gardencorev1beta1.Shoot) time.Duration {
	p.calls = append(p.calls, polledCall{step: step, shoot: shoot})
	return p.after
}

// TestWaitForShootPollsAsPollsSays runs WaitForShoot with and without Config.Polls. Without it,
// the step polls at Poll in every state. With it, the step polls at what Polls answers, and
// hands it the shoot as read: nil when none is visible, else with its last operation and
// annotations, which say which state the poll is for.
func TestWaitForShootPollsAsPollsSays(t *testing.T) {
	const (
		create    = gardencorev1beta1.LastOperationTypeCreate
		reconcile = gardencorev1beta1.LastOperationTypeReconcile
	)
	tests := []struct {
		name string
		// noShoot leaves the shoot out; status is what Gardener reports for it otherwise.
		noShoot bool
		status  func(*gardencorev1beta1.Shoot)
		// annotations are set on the shoot's metadata.
		annotations map[string]string
		// operation is the type of the last operation Polls sees; empty for none.
		operation gardencorev1beta1.LastOperationType
		// says is part of the wait message in both modes: it shows which state the poll is for.
		says string
	}{
		{name: "a shoot not visible yet", noShoot: true, says: "shoot rt is not visible yet"},
		{name: "a shoot without an operation", says: "Waiting for Gardener to start an operation"},
		{
			name: "a shoot being created", status: operation(create, gardencorev1beta1.LastOperationStatePending),
			operation: create, says: "Gardener operation Create is Pending",
		},
		{
			name: "a creation in Error", status: operation(create, gardencorev1beta1.LastOperationStateError),
			operation: create, says: "Create Error, Gardener retries",
		},
		{
			name: "a shoot being reconciled", status: operation(reconcile, gardencorev1beta1.LastOperationStateProcessing),
			operation: reconcile, says: "Gardener operation Reconcile is Processing",
		},
		{
			name:        "a reconciliation whose retry Gardener has not picked up",
			status:      operation(reconcile, gardencorev1beta1.LastOperationStateFailed, gardencorev1beta1.ErrorInfraQuotaExceeded),
			annotations: map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.ShootOperationRetry},
			operation:   reconcile, says: "Gardener has not yet picked up the retry",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			w := newWorld(t, rt)
			if !tt.noShoot {
				shoot := setShootStatus(t, w, rt, tt.status)
				if tt.annotations != nil {
					maps.Copy(shoot.Annotations, tt.annotations)
					if err := w.garden.Update(t.Context(), shoot); err != nil {
						t.Fatal(err)
					}
				}
			}
			w.steps.PollInterval = 10 * time.Second

			normal := w.steps.waitForShoot(t.Context(), rt.DeepCopy())
			p := &polled{after: 42 * time.Second}
			w.steps.Polls = p.polls
			asked := w.steps.waitForShoot(t.Context(), rt)

			fsmtest.Check(t, normal, fsmtest.Wait(10*time.Second))
			fsmtest.Check(t, asked, fsmtest.Wait(42*time.Second))
			for _, out := range []fsm.Outcome{normal, asked} {
				if !strings.Contains(out.String(), tt.says) {
					t.Errorf("outcome %s does not say %q", out, tt.says)
				}
			}
			if len(p.calls) != 1 || p.calls[0].step != StepWaitForShoot {
				t.Fatalf("Polls calls %+v, want one for %s", p.calls, StepWaitForShoot)
			}
			shoot := p.calls[0].shoot
			if (shoot == nil) != tt.noShoot {
				t.Fatalf("Polls got shoot %v, want one %t", shoot, !tt.noShoot)
			}
			if shoot == nil {
				return
			}
			var op gardencorev1beta1.LastOperationType
			if shoot.Status.LastOperation != nil {
				op = shoot.Status.LastOperation.Type
			}
			if shoot.Name != rt.Spec.Shoot.Name || op != tt.operation {
				t.Errorf("Polls got shoot %s with operation %q, want %s with %q", shoot.Name, op, rt.Spec.Shoot.Name, tt.operation)
			}
			for k, v := range tt.annotations {
				if shoot.Annotations[k] != v {
					t.Errorf("Polls got annotation %s=%q, want %q", k, shoot.Annotations[k], v)
				}
			}
		})
	}
}

// TestWaitForShootPollIsExactWithoutSpread runs WaitForShoot under an engine without poll
// spread: a shoot being created is read again after exactly the interval Polls answers, and
// each run reads it from the garden.
func TestWaitForShootPollIsExactWithoutSpread(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt)
	setShootStatus(t, w, rt, operation(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing))
	const after = time.Minute
	w.steps.Polls = (&polled{after: after}).polls
	engine, err := fsm.New(fsm.Machine[*infrav1.Runtime]{
		Name: ControllerName, Start: StepWaitForShoot,
		Steps: []fsm.Step[*infrav1.Runtime]{{Name: StepWaitForShoot, Run: w.steps.waitForShoot, Deadline: time.Hour}},
	}, fsm.WithClock(w.clock), fsm.WithRand(func() float64 { return 0.99 }), fsm.WithPollSpread(0))
	if err != nil {
		t.Fatal(err)
	}
	w.resetCalls()
	for i := range 3 {
		if res := engine.Reconcile(t.Context(), rt); res.RequeueAfter != after {
			t.Fatalf("poll %d: requeue after %s, want %s", i+1, res.RequeueAfter, after)
		}
		w.clock.Step(after)
	}
	if n := w.reads("garden", "Shoot"); n != 3 {
		t.Errorf("the shoot was read %d times in 3 polls, want 3", n)
	}
}
