package runtime

import (
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestWaitForShootDeletion covers the wait for the shoot to disappear: the Gardener status is
// mirrored while it is there, a failed deletion is reported, any other operation waited out.
func TestWaitForShootDeletion(t *testing.T) {
	// deleting returns rt's shoot of generation 3 being deleted, whose last operation Gardener
	// reports for observed generation observed, with lastErrors of the codes when there are any.
	deleting := func(rt *infrav1.Runtime, typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState, observed int64, codes ...gardencorev1beta1.ErrorCode) *gardencorev1beta1.Shoot {
		s := testShoot(rt)
		s.Generation = 3
		s.Finalizers = []string{"gardener"}
		s.DeletionTimestamp = &metav1.Time{Time: t0}
		s.Status.ObservedGeneration = observed
		s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: typ, State: state, Progress: 40, Description: string(typ) + " " + string(state)}
		if codes != nil {
			s.Status.LastErrors = []gardencorev1beta1.LastError{{Description: "the provider said no", Codes: codes}}
		}
		return s
	}
	const (
		del       = gardencorev1beta1.LastOperationTypeDelete
		reconcile = gardencorev1beta1.LastOperationTypeReconcile
		failed    = gardencorev1beta1.LastOperationStateFailed
	)
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// shoot is rt's shoot in the garden, nil for none.
		shoot  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot
		faults []fault
		want   fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// mirrored is the last operation in rt.Status.Gardener ("type state"), "" for none.
		mirrored string
		// mirroredErrors is the number of last errors there.
		mirroredErrors int
	}{
		{
			name:   "a shoot that is gone moves on, deprovisioned",
			reason: "the Deprovisioned condition tells users the cluster is gone",
			want:   fsmtest.Next(StepDeleteAuthentication),
		},
		{
			name:   "a shoot being deleted is waited for, its Gardener status mirrored",
			reason: "users follow the deletion in the Runtime's status; the wait message names the shoot",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return deleting(rt, del, gardencorev1beta1.LastOperationStateProcessing, 3)
			},
			want: fsmtest.Wait(30 * time.Second), mirrored: "Delete Processing",
			says: "shoot rt is being deleted",
		},
		{
			name:   "a failed deletion is reported",
			reason: "an unknown error code may pass, so it is retried; the message passes on Gardener's codes and description",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return deleting(rt, del, failed, 3, "ERR_SOMETHING_NEW")
			},
			want: fsmtest.Transient(gardener.ReasonShootOperationFailed), mirrored: "Delete Failed", mirroredErrors: 1,
			says: "shoot garden-kyma/rt: Delete failed [ERR_SOMETHING_NEW]: the provider said no",
		},
		{
			name:   "a deletion failed for a user error is terminal",
			reason: "a retry cannot fix refused credentials; the message passes on Gardener's code",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return deleting(rt, del, failed, 3, gardencorev1beta1.ErrorInfraUnauthorized)
			},
			want: fsmtest.Terminal("InfraUnauthorized"), mirrored: "Delete Failed", mirroredErrors: 1,
			says: "shoot garden-kyma/rt: Delete failed [" + string(gardencorev1beta1.ErrorInfraUnauthorized) + "]",
		},
		{
			name:   "a failed operation of another type is waited out",
			reason: "only a failed Delete is about the deletion",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return deleting(rt, reconcile, failed, 3, "ERR_SOMETHING_NEW")
			},
			want: fsmtest.Wait(30 * time.Second), mirrored: "Reconcile Failed", mirroredErrors: 1,
		},
		{
			name:   "a deletion that failed for an older generation is waited out",
			reason: "Gardener has not yet looked at the deletion request",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return deleting(rt, del, failed, 2, "ERR_SOMETHING_NEW")
			},
			want: fsmtest.Wait(30 * time.Second), mirrored: "Delete Failed", mirroredErrors: 1,
		},
		{
			name:   "a shoot that cannot be read fails",
			reason: "an unreadable shoot is no proof that it is gone",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return deleting(rt, del, failed, 3) },
			faults: []fault{{store: "garden", verb: "get", kind: "Shoot", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			var objs []client.Object
			if tt.shoot != nil {
				objs = append(objs, tt.shoot(rt))
			}
			w := newWorld(t, objs...)
			w.fail(tt.faults...)

			out := w.steps.waitForShootDeletion(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			if got, want := conditionTrue(rt, infrav1.ConditionDeprovisioned), tt.shoot == nil; got != want {
				t.Errorf("%s true %t, want %t", infrav1.ConditionDeprovisioned, got, want)
			}
			mirrored, errs := "", 0
			if g := rt.Status.Gardener; g != nil {
				if g.LastOperation != nil {
					mirrored = g.LastOperation.Type + " " + g.LastOperation.State
				}
				errs = len(g.LastErrors)
			}
			if mirrored != tt.mirrored || errs != tt.mirroredErrors {
				t.Errorf("mirrored %q with %d errors, want %q with %d", mirrored, errs, tt.mirrored, tt.mirroredErrors)
			}
			if got := rt.Status.ShootLastOperation != nil; got != (tt.mirrored != "") {
				t.Errorf("upstream's shootLastOperation set %t, want %t", got, tt.mirrored != "")
			}
			checkWrites(t, w, "garden")
		})
	}
}

// TestWaitForShootDeletionPollsAsPollsSays runs WaitForShootDeletion with Config.Polls. A shoot
// being deleted is looked for again after what Polls answers, not after Poll. Polls gets the
// step and the shoot with its Delete operation. A shoot that is gone still moves on at once.
func TestWaitForShootDeletionPollsAsPollsSays(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	s := testShoot(rt)
	s.Finalizers = []string{"gardener"}
	s.DeletionTimestamp = &metav1.Time{Time: t0}
	s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeDelete,
		State: gardencorev1beta1.LastOperationStateProcessing, Progress: 40}
	w := newWorld(t, s)
	w.steps.PollInterval = 10 * time.Second

	fsmtest.Check(t, w.steps.waitForShootDeletion(t.Context(), rt.DeepCopy()), fsmtest.Wait(10*time.Second))
	p := &polled{after: 90 * time.Second}
	w.steps.Polls = p.polls
	fsmtest.Check(t, w.steps.waitForShootDeletion(t.Context(), rt.DeepCopy()), fsmtest.Wait(90*time.Second))
	if len(p.calls) != 1 || p.calls[0].step != StepWaitForShootDeletion || p.calls[0].shoot == nil ||
		p.calls[0].shoot.Status.LastOperation == nil || p.calls[0].shoot.Status.LastOperation.Type != gardencorev1beta1.LastOperationTypeDelete {
		t.Errorf("Polls calls %+v, want one for %s with the shoot being deleted", p.calls, StepWaitForShootDeletion)
	}

	// Gardener removes its finalizer, and the shoot is gone.
	gone := testShoot(rt)
	w.get(w.garden, gone)
	gone.Finalizers = nil
	if err := w.garden.Update(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	fsmtest.Check(t, w.steps.waitForShootDeletion(t.Context(), rt), fsmtest.Next(StepDeleteAuthentication))
}
