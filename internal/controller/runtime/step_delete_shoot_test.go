package runtime

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
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
		// shoot is rt's shoot in the garden, nil for none.
		shoot  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot
		faults []fault
		want   string
		class  retry.Class
		reason string
		// writes are the garden writes; confirmed and deleting say what the shoot shows afterwards.
		writes              []string
		confirmed, deleting bool
	}{
		{
			name: "no shoot moves on to the authentication configuration",
			want: "Next(DeleteAuthentication)",
		},
		{
			name:  "the Runtime's shoot is confirmed and deleted",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), nil) },
			want:  "Next(WaitForShootDeletion)", writes: []string{"patch Shoot", "delete Shoot"}, confirmed: true, deleting: true,
		},
		{
			name: "upstream's shoot, without owner labels, is the Runtime's",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, nil, map[string]string{"other": "kept"})
			},
			want: "Next(WaitForShootDeletion)", writes: []string{"patch Shoot", "delete Shoot"}, confirmed: true, deleting: true,
		},
		{
			name:  "an already confirmed shoot is not patched again",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), confirmed) },
			want:  "Next(WaitForShootDeletion)", writes: []string{"delete Shoot"}, confirmed: true, deleting: true,
		},
		{
			name: "a shoot labelled for another Runtime stays",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, map[string]string{LabelRuntimeName: "first", LabelRuntimeNamespace: rt.Namespace}, nil)
			},
			want: "Next(DeleteAuthentication)",
		},
		{
			name: "a shoot labelled for a Runtime of the same name in another namespace stays",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, map[string]string{LabelRuntimeName: rt.Name, LabelRuntimeNamespace: "elsewhere"}, nil)
			},
			want: "Next(DeleteAuthentication)",
		},
		{
			name: "upstream's shoot of another runtime id stays",
			shoot: func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
				return shoot(rt, nil, map[string]string{gardener.AnnotationRuntimeID: "rid-first"})
			},
			want: "Next(DeleteAuthentication)",
		},
		{
			name:   "a shoot that cannot be read fails",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), nil) },
			faults: []fault{{store: "garden", verb: "get", kind: "Shoot", err: unavailable()}},
			want:   "Fail(get shoot rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
		},
		{
			name:   "a failed confirmation fails before the deletion",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), nil) },
			faults: []fault{{store: "garden", verb: "patch", kind: "Shoot", err: unavailable()}},
			want:   "Fail(confirm deletion of shoot rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			writes: []string{"patch Shoot"},
		},
		{
			name:   "a failed deletion fails",
			shoot:  func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot { return shoot(rt, ownerLabels(rt), confirmed) },
			faults: []fault{{store: "garden", verb: "delete", kind: "Shoot", err: unavailable()}},
			want:   "Fail(delete shoot rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			writes: []string{"delete Shoot"}, confirmed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			var objs []client.Object
			if tt.shoot != nil {
				objs = append(objs, tt.shoot(rt))
			}
			w := newWorld(t, objs...)
			w.fail(tt.faults...)

			out := w.steps.deleteShoot(t.Context(), rt)

			checkOutcome(t, out, tt.want, tt.class, tt.reason)
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
