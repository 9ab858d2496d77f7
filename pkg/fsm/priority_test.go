package fsm_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// TestRecheckIsBackgroundWork: the requeue of a waiting object keeps the priority it was taken
// with (none set), and the periodic re-check of a Ready object goes behind the objects in flight,
// at controller-runtime's low priority, both when it finishes and when it is not due yet.
func TestRecheckIsBackgroundWork(t *testing.T) {
	waiting := true
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Wait",
		Steps: []fsm.Step[*widget]{{Name: "Wait", Run: func(context.Context, *widget) fsm.Outcome {
			if waiting {
				return fsm.Wait(time.Minute, "not yet")
			}
			return fsm.Done()
		}}},
	}, fsm.WithResync(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	w := newWidget()
	if res := e.Reconcile(t.Context(), w); res.RequeueAfter <= 0 || res.Priority != nil {
		t.Errorf("waiting: %+v, want a requeue that keeps the priority it was taken with", res)
	}
	waiting = false
	for _, pass := range []string{"finished", "not due"} {
		res := e.Reconcile(t.Context(), w)
		if res.RequeueAfter <= 0 || res.Priority == nil || *res.Priority != handler.LowPriority {
			t.Errorf("%s: %+v, want a requeue at priority %d", pass, res, handler.LowPriority)
		}
	}
}
