package fsm_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
