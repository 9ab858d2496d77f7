package runtime

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestRemoveFinalizer covers the last step of a deletion: this controller's and upstream's
// finalizer go in one write, anyone else's stays.
func TestRemoveFinalizer(t *testing.T) {
	const someoneElse = "example.com/someone-else"
	tests := []struct {
		name string
		// reason says why the case exists.
		reason     string
		finalizers []string
		// gone leaves the Runtime out of the store, as if it was deleted in between.
		gone   bool
		faults []fault
		want   fsmtest.Result
		// writes are the kcp writes; left are the finalizers the stored Runtime keeps, nil
		// when it is gone.
		writes []string
		left   []string
	}{
		{
			name:       "removes both finalizers in one write",
			reason:     "an adopted Runtime carries upstream's finalizer too, and no one else would remove it",
			finalizers: []string{Finalizer, UpstreamFinalizer},
			want:       fsmtest.Done(), writes: []string{"patch Runtime"},
		},
		{
			name:       "removes the controller's finalizer",
			reason:     "the finalizer is the last thing that keeps a deleted Runtime",
			finalizers: []string{Finalizer},
			want:       fsmtest.Done(), writes: []string{"patch Runtime"},
		},
		{
			name:       "removes upstream's finalizer of a Runtime deleted before it was adopted",
			reason:     "a Runtime deleted before its adoption must not hang on upstream's finalizer",
			finalizers: []string{UpstreamFinalizer},
			want:       fsmtest.Done(), writes: []string{"patch Runtime"},
		},
		{
			name:       "leaves someone else's finalizer",
			reason:     "other controllers' finalizers are theirs to remove",
			finalizers: []string{someoneElse, Finalizer},
			want:       fsmtest.Done(), writes: []string{"patch Runtime"}, left: []string{someoneElse},
		},
		{
			name:       "a Runtime without either finalizer is not written",
			reason:     "a repeated removal writes nothing",
			finalizers: []string{someoneElse},
			want:       fsmtest.Done(), left: []string{someoneElse},
		},
		{
			name:       "a Runtime already gone from the store is done",
			reason:     "a Runtime that is gone has nothing left to remove",
			finalizers: []string{Finalizer},
			gone:       true,
			want:       fsmtest.Done(), writes: []string{"patch Runtime"},
		},
		{
			name:       "a failed write fails and keeps the finalizers",
			reason:     "a failed write is retried, not taken for done",
			finalizers: []string{Finalizer, UpstreamFinalizer},
			faults:     []fault{{store: "kcp", verb: "patch", kind: "Runtime", err: unavailable()}},
			want:       fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes:     []string{"patch Runtime"}, left: []string{Finalizer, UpstreamFinalizer},
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

			fsmtest.Check(t, out, tt.want)
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
