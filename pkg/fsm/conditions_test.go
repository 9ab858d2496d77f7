package fsm_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// TestStepConditionsSurvive checks that a condition a step sets on its object (Provisioned,
// say) is kept beside the Ready condition the engine sets, on the step's own call and on later
// calls of other steps.
func TestStepConditionsSurvive(t *testing.T) {
	set := func(typ string) func(context.Context, *widget) {
		return func(_ context.Context, rt *widget) {
			meta.SetStatusCondition(&rt.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Set"})
		}
	}
	machine := fsm.Machine[*widget]{
		Name:  "conditions",
		Start: "First",
		Steps: []fsm.Step[*widget]{
			{Name: "First", Next: []string{"Second"}, Run: func(ctx context.Context, rt *widget) fsm.Outcome {
				set("FirstDone")(ctx, rt)
				return fsm.Next("Second")
			}},
			{Name: "Second", Run: func(ctx context.Context, rt *widget) fsm.Outcome {
				set("SecondDone")(ctx, rt)
				return fsm.Done()
			}},
		},
	}
	engine, err := fsm.New(machine, fsm.WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		t.Fatal(err)
	}
	rt := &widget{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 1}}
	for range 3 {
		engine.Reconcile(t.Context(), rt)
	}
	if rt.Status.State != fsmv1.StateReady {
		t.Fatalf("state = %s, want Ready", rt.Status.State)
	}
	for _, typ := range []string{"FirstDone", "SecondDone", fsmv1.ConditionReady} {
		if c := meta.FindStatusCondition(rt.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("condition %s = %+v, want True", typ, c)
		}
	}
}
