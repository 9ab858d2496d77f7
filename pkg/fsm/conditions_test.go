package fsm_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// TestStepConditionsSurvive checks that a condition a step sets on its object (Provisioned,
// say) is kept beside the Ready condition the engine sets, on the step's own call and on later
// calls of other steps.
func TestStepConditionsSurvive(t *testing.T) {
	set := func(typ string) func(context.Context, *infrav1.Runtime) {
		return func(_ context.Context, rt *infrav1.Runtime) {
			meta.SetStatusCondition(&rt.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Set"})
		}
	}
	machine := fsm.Machine[*infrav1.Runtime]{
		Name:  "conditions",
		Start: "First",
		Steps: []fsm.Step[*infrav1.Runtime]{
			{Name: "First", Next: []string{"Second"}, Run: func(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
				set("FirstDone")(ctx, rt)
				return fsm.Next("Second")
			}},
			{Name: "Second", Run: func(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
				set("SecondDone")(ctx, rt)
				return fsm.Done()
			}},
		},
	}
	engine, err := fsm.New(machine, fsm.WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 1}}
	for range 3 {
		engine.Reconcile(t.Context(), rt)
	}
	if rt.Status.State != infrav1.StateReady {
		t.Fatalf("state = %s, want Ready", rt.Status.State)
	}
	for _, typ := range []string{"FirstDone", "SecondDone", infrav1.ConditionReady} {
		if c := meta.FindStatusCondition(rt.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("condition %s = %+v, want True", typ, c)
		}
	}
}
