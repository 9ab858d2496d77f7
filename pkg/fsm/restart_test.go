package fsm_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestPersistedRetriesSurviveARestart restarts the process in the middle of a backoff: one
// engine schedules a retry, and an engine created later (the next process) finds it in the
// persisted status. The new engine waits for the persisted time, then runs the step as the next
// attempt, as a retry run.
func TestPersistedRetriesSurviveARestart(t *testing.T) {
	// policy retries after a fixed 15s.
	policy := retry.Policy{Initial: 15 * time.Second, Factor: 1, Cap: 15 * time.Second, MaxAttempts: 100}
	clock := clocktesting.NewFakeClock(start)
	runs, retries := 0, 0
	m := fsm.Machine[*widget]{
		Name: "example", Start: "Create",
		Steps: []fsm.Step[*widget]{{Name: "Create", Run: func(ctx context.Context, _ *widget) fsm.Outcome {
			runs++
			if fsm.IsRetry(ctx) {
				retries++
			}
			return fsm.Fail(errInternal)
		}}},
		DefaultPolicy: policy,
	}
	first, err := fsm.New(m, fsm.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1, UID: "uid-1"}}
	if res := first.Reconcile(t.Context(), obj); res.RequeueAfter != 15*time.Second {
		t.Fatalf("first failure: requeue after %s, want 15s", res.RequeueAfter)
	}
	if res := first.Reconcile(t.Context(), obj); runs != 1 || res.RequeueAfter != 15*time.Second {
		t.Fatalf("the first engine ran its step %d times, requeue after %s; want once, 15s", runs, res.RequeueAfter)
	}

	obj = roundTrip(t, obj)
	clock.Step(5 * time.Second)
	second, err := fsm.New(m, fsm.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if res := second.Reconcile(t.Context(), obj); runs != 1 || res.RequeueAfter != 10*time.Second {
		t.Fatalf("after the restart: %d runs, requeue after %s; want 1 run, 10s", runs, res.RequeueAfter)
	}
	if r := obj.Status.Retry; r == nil || r.Attempt != 1 || r.NextRetryAt == nil {
		t.Errorf("retry record %+v, want attempt 1 with a next retry", r)
	}

	clock.Step(10 * time.Second)
	if res := second.Reconcile(t.Context(), obj); runs != 2 || retries != 1 || res.RequeueAfter != 15*time.Second {
		t.Fatalf("at the persisted time: %d runs, %d retry runs, requeue after %s; want 2, 1, 15s", runs, retries, res.RequeueAfter)
	}
	if r := obj.Status.Retry; r == nil || r.Attempt != 2 {
		t.Errorf("retry record %+v, want attempt 2", r)
	}
}

// TestWithPollSpread spreads the poll of a waiting step by the fraction WithPollSpread sets,
// ±10% by default; zero polls at exactly the interval the step asks for.
func TestWithPollSpread(t *testing.T) {
	tests := []struct {
		name string
		opts []fsm.Option
		want time.Duration
	}{
		{name: "spread by default", want: 65400 * time.Millisecond},
		{name: "the default spread", opts: []fsm.Option{fsm.WithPollSpread(fsm.DefaultPollSpread)}, want: 65400 * time.Millisecond},
		{name: "a wider spread", opts: []fsm.Option{fsm.WithPollSpread(0.5)}, want: 87 * time.Second},
		{name: "exact without spread", opts: []fsm.Option{fsm.WithPollSpread(0)}, want: time.Minute},
		{name: "a fraction below zero is ignored", opts: []fsm.Option{fsm.WithPollSpread(-0.5)}, want: 65400 * time.Millisecond},
		{name: "a fraction above one is ignored", opts: []fsm.Option{fsm.WithPollSpread(2)}, want: 65400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := fsm.New(fsm.Machine[*widget]{
				Name: "example", Start: "Await",
				Steps: []fsm.Step[*widget]{{Name: "Await", Run: func(context.Context, *widget) fsm.Outcome {
					return fsm.Wait(time.Minute, "the bucket is not there yet")
				}}},
			}, append([]fsm.Option{fsm.WithRand(func() float64 { return 0.95 })}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1}}
			if res := e.Reconcile(t.Context(), obj); res.RequeueAfter != tt.want {
				t.Errorf("requeue after %s, want %s", res.RequeueAfter, tt.want)
			}
		})
	}
}

// roundTrip returns obj as the API server stores it: through JSON, whole seconds.
func roundTrip(t *testing.T, obj *widget) *widget {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &widget{}
	if err := json.Unmarshal(data, fresh); err != nil {
		t.Fatal(err)
	}
	return fresh
}
