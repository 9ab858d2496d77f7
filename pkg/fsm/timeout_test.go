package fsm_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestStepTimeoutFreesTheWorker runs a step whose call hangs until its context ends: the step
// timeout ends it, the call's error is a counted Timeout failure that is retried, and the
// worker is back within the timeout rather than held.
func TestStepTimeoutFreesTheWorker(t *testing.T) {
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Hang",
		Steps: []fsm.Step[*widget]{{Name: "Hang", Run: func(ctx context.Context, _ *widget) fsm.Outcome {
			<-ctx.Done() // a call on a connection that never answers
			return fsm.Fail(ctx.Err())
		}}},
	}, fsm.WithStepTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rt := &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Reconcile(context.Background(), rt)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the hung step still holds the worker 10s after its 50ms timeout")
	}
	r := rt.Status.Retry
	if r == nil || r.Attempt != 1 || r.Class != string(retry.ClassTransient) || r.Reason != retry.ReasonTimeout || r.NextRetryAt == nil {
		t.Errorf("retry record %+v, want attempt 1 of a Transient Timeout with a next retry", r)
	}
}

// TestStoppingIsNotAFailure ends the caller's context while a step runs, as a manager that stops
// does with its workers: the step's error is no failure, the status keeps what the step before
// it left, and no failure is counted.
func TestStoppingIsNotAFailure(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics := newStepMetrics(t, reg, "example")
	running := make(chan struct{})
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "First",
		Steps: []fsm.Step[*widget]{
			{Name: "First", Next: []string{"Hang"}, Run: func(context.Context, *widget) fsm.Outcome { return fsm.Next("Hang") }},
			{Name: "Hang", Run: func(ctx context.Context, _ *widget) fsm.Outcome {
				close(running)
				<-ctx.Done()
				return fsm.Fail(ctx.Err())
			}},
		},
	}, fsm.WithMetrics(metrics), fsm.WithChain(2, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	w := newWidget()
	ctx, stop := context.WithCancel(context.Background())
	go func() { <-running; stop() }()
	res := e.Reconcile(ctx, w)

	if res != (ctrl.Result{}) {
		t.Errorf("result %+v, want none: the next process picks the object up", res)
	}
	if w.Status.Retry != nil {
		t.Errorf("retry record %+v after a stop, want none", w.Status.Retry)
	}
	if w.Status.Step == nil || w.Status.Step.Name != "Hang" {
		t.Errorf("step %+v, want Hang, where First left the widget", w.Status.Step)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, f := range families {
		if f.GetName() != "example_fsm_step_failures_total" {
			continue
		}
		seen = true
		for _, m := range f.GetMetric() {
			if v := m.GetCounter().GetValue(); v != 0 {
				t.Errorf("%v failures counted in %v, want none", v, m.GetLabel())
			}
		}
	}
	if !seen {
		t.Error("no example_fsm_step_failures_total series gathered: the check above checked nothing")
	}
}

// TestCallersDeadlineIsAFailure: a deadline of the caller's context (controller-runtime's
// ReconciliationTimeout) that ends a step is the step's failure, retried like its own timeout,
// not a stop that would drop the object from the queue.
func TestCallersDeadlineIsAFailure(t *testing.T) {
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Hang",
		Steps: []fsm.Step[*widget]{{Name: "Hang", Run: func(ctx context.Context, _ *widget) fsm.Outcome {
			<-ctx.Done()
			return fsm.Fail(ctx.Err())
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := newWidget()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := e.Reconcile(ctx, w)
	if r := w.Status.Retry; r == nil || r.Attempt != 1 || r.NextRetryAt == nil {
		t.Errorf("retry record %+v, want attempt 1 with a next retry", r)
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("result %+v, want a requeue for the retry", res)
	}
}
