package fsm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// chainMachine moves A → B → C → D; C waits while waiting is set, then moves on, and D fails
// while failing is set. Every run is recorded, with the conditions (one per step that ran
// before: Ran<step>) it found on the object, and adds its own.
type chainMachine struct {
	runs             []string
	seen             []string
	waiting, failing bool
	// clk, when set, moves a second during each step's run.
	clk *clocktesting.FakeClock
}

func (c *chainMachine) machine() fsm.Machine[*widget] {
	step := func(name string, out func() fsm.Outcome) fsm.StepFunc[*widget] {
		return func(_ context.Context, rt *widget) fsm.Outcome {
			c.runs = append(c.runs, name)
			if c.clk != nil {
				c.clk.Step(time.Second)
			}
			var found string
			for _, cond := range rt.Status.Conditions {
				if cond.Type != fsmv1.ConditionReady {
					found += strings.TrimPrefix(cond.Type, "Ran")
				}
			}
			c.seen = append(c.seen, found)
			meta.SetStatusCondition(&rt.Status.Conditions, metav1.Condition{Type: "Ran" + name, Status: metav1.ConditionTrue, Reason: "Ran"})
			return out()
		}
	}
	return fsm.Machine[*widget]{
		Name: "chain", Start: "A",
		Steps: []fsm.Step[*widget]{
			{Name: "A", Run: step("A", func() fsm.Outcome { return fsm.Next("B") }), Next: []string{"B"}},
			{Name: "B", Run: step("B", func() fsm.Outcome { return fsm.Next("C") }), Next: []string{"C"}},
			{Name: "C", Run: step("C", func() fsm.Outcome {
				if c.waiting {
					return fsm.Wait(time.Minute, "the world is not there yet")
				}
				return fsm.Next("D")
			}), Next: []string{"D"}},
			{Name: "D", Run: step("D", func() fsm.Outcome {
				if c.failing {
					return fsm.Fail(retry.Transient("Down", errors.New("down")))
				}
				return fsm.Done()
			})},
		},
	}
}

func TestChainRunsStepsThatMoveOnInOneCall(t *testing.T) {
	c := &chainMachine{waiting: true, failing: true}
	e, err := fsm.New(c.machine(), fsm.WithChain(8, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	rt := &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1}}

	// A and B move on; C waits: the chain ends there, and the status says C waits.
	e.Reconcile(context.Background(), rt)
	if got, want := c.runs, []string{"A", "B", "C"}; !equal(got, want) {
		t.Fatalf("first call ran %v, want %v", got, want)
	}
	if got, want := c.seen, []string{"", "A", "AB"}; !equal(got, want) {
		t.Errorf("the steps found the conditions of %v, want each those of the steps before it in the call (%v)", got, want)
	}
	ready := meta.FindStatusCondition(rt.Status.Conditions, fsmv1.ConditionReady)
	if rt.Status.Step.Name != "C" || ready == nil || ready.Reason != fsm.ReasonWaiting {
		t.Errorf("after the first call: step %s, Ready %+v; want C, Waiting", rt.Status.Step.Name, ready)
	}

	// C moves on; D fails: the failure ends the chain with D's retry record.
	c.runs, c.seen, c.waiting = nil, nil, false
	e.Reconcile(context.Background(), rt)
	if got, want := c.runs, []string{"C", "D"}; !equal(got, want) {
		t.Fatalf("second call ran %v, want %v", got, want)
	}
	if r := rt.Status.Retry; rt.Status.Step.Name != "D" || r == nil || r.Step != "D" || r.Attempt != 1 || r.NextRetryAt == nil {
		t.Errorf("after the second call: step %s, retry %+v; want D with attempt 1 and a next retry", rt.Status.Step.Name, r)
	}
}

func TestChainStopsAtItsLimits(t *testing.T) {
	rt := func() *widget {
		return &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1}}
	}
	tests := []struct {
		name  string
		steps int
		slow  bool // each step takes a second
		want  []string
	}{
		{name: "one step by default", steps: 0, want: []string{"A"}},
		{name: "the step limit", steps: 2, want: []string{"A", "B"}},
		// The chain may run for 1.5s: B starts after 1s, C would start after 2s.
		{name: "the time limit", steps: 8, slow: true, want: []string{"A", "B"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &chainMachine{waiting: true, clk: clocktesting.NewFakeClock(time.Now())}
			if !tc.slow {
				c.clk = nil
			}
			opts := []fsm.Option{}
			if tc.slow {
				opts = append(opts, fsm.WithClock(c.clk))
			}
			if tc.steps > 0 {
				opts = append(opts, fsm.WithChain(tc.steps, 1500*time.Millisecond))
			}
			e, err := fsm.New(c.machine(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			obj := rt()
			res := e.Reconcile(context.Background(), obj)
			if !equal(c.runs, tc.want) {
				t.Fatalf("ran %v, want %v", c.runs, tc.want)
			}
			next := tc.want[len(tc.want)-1]
			if obj.Status.Step.Name == next || res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
				t.Errorf("status in step %s, requeue after %s; want the step after %s, due at once", obj.Status.Step.Name, res.RequeueAfter, next)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
