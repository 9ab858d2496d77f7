package fsm_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// A two-step machine: Create fails once with a transient error, the engine schedules a retry
// with backoff, and the retry succeeds.
func Example() {
	createFailures := 1
	machine := fsm.Machine[*infrav1.Runtime]{
		Name:  "example",
		Start: "Create",
		Steps: []fsm.Step[*infrav1.Runtime]{
			{Name: "Create", Next: []string{"Verify"}, Run: func(context.Context, *infrav1.Runtime) fsm.Outcome {
				if createFailures > 0 {
					createFailures--
					return fsm.Fail(retry.Transient("BackendUnavailable", errors.New("backend unavailable")))
				}
				return fsm.Next("Verify")
			}},
			{Name: "Verify", Run: func(context.Context, *infrav1.Runtime) fsm.Outcome { return fsm.Done() }},
		},
	}
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	engine, err := fsm.New(machine, fsm.WithClock(clock), fsm.WithRand(func() float64 { return 0 }))
	if err != nil {
		panic(err)
	}
	obj := &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "example", Generation: 1}}
	for obj.Status.State != infrav1.StateReady {
		res := engine.Reconcile(context.Background(), obj)
		st := obj.Status
		if st.Retry != nil {
			fmt.Printf("%s: attempt %d failed (%s/%s), retry in %s\n", st.Retry.Step, st.Retry.Attempt, st.Retry.Class, st.Retry.Reason, res.RequeueAfter)
		} else {
			fmt.Printf("%s, step %s\n", st.State, st.Step.Name)
		}
		clock.Step(res.RequeueAfter)
	}
	// Output:
	// Create: attempt 1 failed (Transient/BackendUnavailable), retry in 3s
	// Pending, step Verify
	// Ready, step Done
}
