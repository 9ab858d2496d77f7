package runtime

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestDeleteShoot covers the deletion request of the runtime's shoot: confirmed once, then
// deleted, and never for a shoot labelled for another Runtime.
func TestDeleteShoot(t *testing.T) {
	// shoot returns rt's shoot with labels and annotations; Gardener's finalizer keeps it
	// after the deletion request, as Gardener does until the cluster is gone.
	shoot := func(rt *infrav1.Runtime, labels, annotations map[string]string) *gardencorev1beta1.Shoot {
		s := testShoot(rt)
		s.Labels, s.Annotations = labels, annotations
		s.Finalizers = []string{"gardener"}
		return s
	}
	confirmed := map[string]string{ConfirmDeletionAnnotation: "true"}
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// shoot is rt's shoot in the garden, nil for none.
		shoot  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot
		faults []fault
		want   fsmtest.Result
		// writes are the garden writes; confirmed and deleting say what the shoot shows afterwards.
		writes              []string
		confirmed, deleting bool
	}{
		{
			name:   "no shoot moves on to the authentication configuration",
			reason: "a shoot that is gone needs no wait for its deletion",
			want:   fsmtest.Next(StepDeleteAuthentication),
		},
		{
			name:   "the Runtime's shoot is confirmed and deleted",
			reason: "Gardener refuses to delete a shoot without the confirmation",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), nil) },
			want:   fsmtest.Next(StepWaitForShootDeletion), writes: []string{"patch Shoot", "delete Shoot"}, confirmed: true, deleting: true,
		},
		{
			name:   "upstream's shoot, without owner labels, is the Runtime's",
			reason: "an adopted Runtime's shoot carries no owner labels, and its annotations are kept",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, nil, map[string]string{"other": "kept"})
			},
			want: fsmtest.Next(StepWaitForShootDeletion), writes: []string{"patch Shoot", "delete Shoot"}, confirmed: true, deleting: true,
		},
		{
			name:   "an already confirmed shoot is not patched again",
			reason: "a repeated deletion writes no more than it must",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), confirmed) },
			want:   fsmtest.Next(StepWaitForShootDeletion), writes: []string{"delete Shoot"}, confirmed: true, deleting: true,
		},
		{
			name:   "a shoot labelled for another Runtime stays",
			reason: "a Runtime must never delete another Runtime's cluster",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, map[string]string{LabelRuntimeName: "first", LabelRuntimeNamespace: rt.Namespace}, nil)
			},
			want: fsmtest.Next(StepDeleteAuthentication),
		},
		{
			name:   "a shoot labelled for a Runtime of the same name in another namespace stays",
			reason: "the owner is name and namespace, not the name alone",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, map[string]string{LabelRuntimeName: rt.Name, LabelRuntimeNamespace: "elsewhere"}, nil)
			},
			want: fsmtest.Next(StepDeleteAuthentication),
		},
		{
			name:   "upstream's shoot of another runtime id stays",
			reason: "upstream's shoots name their owner by runtime id alone",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, nil, map[string]string{gardener.AnnotationRuntimeID: "rid-first"})
			},
			want: fsmtest.Next(StepDeleteAuthentication),
		},
		{
			name:   "a shoot that cannot be read fails",
			reason: "a step that cannot see the owner must not delete blind",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), nil) },
			faults: []fault{{store: "garden", verb: "get", kind: "Shoot", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
		},
		{
			name:   "a failed confirmation fails before the deletion",
			reason: "a deletion without the confirmation would be refused anyway",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), nil) },
			faults: []fault{{store: "garden", verb: "patch", kind: "Shoot", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"patch Shoot"},
		},
		{
			name:   "a failed deletion fails",
			reason: "a failed delete is retried, not taken for done",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), confirmed) },
			faults: []fault{{store: "garden", verb: "delete", kind: "Shoot", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"delete Shoot"}, confirmed: true,
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

			out := w.steps.deleteShoot(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			checkWrites(t, w, "garden", tt.writes...)
			w.heal()
			s := testShoot(rt)
			if w.absent(w.garden, s) {
				if tt.shoot != nil {
					t.Fatal("the shoot is gone despite Gardener's finalizer")
				}
				return
			}
			if got := s.Annotations[ConfirmDeletionAnnotation] == "true"; got != tt.confirmed {
				t.Errorf("deletion confirmed %t, want %t", got, tt.confirmed)
			}
			if got := s.DeletionTimestamp != nil; got != tt.deleting {
				t.Errorf("shoot being deleted %t, want %t", got, tt.deleting)
			}
			if want := tt.shoot(rt).Annotations["other"]; s.Annotations["other"] != want {
				t.Errorf("annotation other %q, want %q kept", s.Annotations["other"], want)
			}
		})
	}
}
