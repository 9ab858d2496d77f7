package runtime

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestRemoveFinalizer covers the last step of a deletion: this controller's and upstream's
// finalizer go in one update, anyone else's stays.
func TestRemoveFinalizer(t *testing.T) {
	const someoneElse = "example.com/someone-else"
	tests := []struct {
		name       string
		finalizers []string
		// gone leaves the Runtime out of the store, as if it was deleted in between.
		gone   bool
		faults []fault
		want   string
		class  retry.Class
		reason string
		// writes are the kcp writes; left are the finalizers the stored Runtime keeps, nil
		// when it is gone.
		writes []string
		left   []string
	}{
		{
			name:       "removes both finalizers in one update",
			finalizers: []string{Finalizer, UpstreamFinalizer},
			want:       "Done", writes: []string{"update Runtime"},
		},
		{
			name:       "removes the controller's finalizer",
			finalizers: []string{Finalizer},
			want:       "Done", writes: []string{"update Runtime"},
		},
		{
			name:       "removes upstream's finalizer of a Runtime deleted before it was adopted",
			finalizers: []string{UpstreamFinalizer},
			want:       "Done", writes: []string{"update Runtime"},
		},
		{
			name:       "leaves someone else's finalizer",
			finalizers: []string{someoneElse, Finalizer},
			want:       "Done", writes: []string{"update Runtime"}, left: []string{someoneElse},
		},
		{
			name:       "a Runtime without either finalizer is not written",
			finalizers: []string{someoneElse},
			want:       "Done", left: []string{someoneElse},
		},
		{
			name:       "a Runtime already gone from the store is done",
			finalizers: []string{Finalizer},
			gone:       true,
			want:       "Done", writes: []string{"update Runtime"},
		},
		{
			name:       "a failed update fails and keeps the finalizers",
			finalizers: []string{Finalizer, UpstreamFinalizer},
			faults:     []fault{{store: "kcp", verb: "update", kind: "Runtime", err: unavailable()}},
			want:       "Fail(remove finalizer: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			writes: []string{"update Runtime"}, left: []string{Finalizer, UpstreamFinalizer},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			rt.Finalizers = tt.finalizers
			rt.DeletionTimestamp = &metav1.Time{Time: t0}
			var objs []client.Object
			if !tt.gone {
				objs = append(objs, rt)
			}
			w := newWorld(t, objs...)
			if !tt.gone {
				w.get(w.kcp, rt)
			}
			w.fail(tt.faults...)

			out := w.steps.removeFinalizer(t.Context(), rt)

			checkOutcome(t, out, tt.want, tt.class, tt.reason)
			checkWrites(t, w, "kcp", tt.writes...)
			w.heal()
			stored := &infrav1.Runtime{}
			stored.Name, stored.Namespace = rt.Name, rt.Namespace
			if w.absent(w.kcp, stored) {
				if tt.left != nil {
					t.Errorf("the Runtime is gone, want it kept with finalizers %v", tt.left)
				}
				return
			}
			if !slices.Equal(stored.Finalizers, tt.left) {
				t.Errorf("finalizers %v, want %v", stored.Finalizers, tt.left)
			}
		})
	}
}
