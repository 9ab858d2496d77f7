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

// TestVolatileRetries restarts the process in the middle of a backoff: one engine schedules a
// retry, and an engine created later (the next process) finds it in the persisted status. With
// WithVolatileRetries the retry is due at once and counts as the next attempt; the retry the new
// engine schedules itself is honoured. Without it, the new engine waits for the persisted time.
func TestVolatileRetries(t *testing.T) {
	// policy retries after a fixed 15s, as the upstream manager does.
	policy := retry.Policy{Initial: 15 * time.Second, Factor: 1, Cap: 15 * time.Second, MaxAttempts: 100}
	tests := []struct {
		name string
		// opts are the options of the engine of the second process.
		opts []fsm.Option
		// restartAfter is how long after the failure the second process starts.
		restartAfter time.Duration
		// wantRun is whether the second process runs the step at its first call.
		wantRun bool
		// wantAfter is the requeue of that call.
		wantAfter time.Duration
	}{
		{name: "persisted retries wait for their time", restartAfter: 5 * time.Second, wantAfter: 10 * time.Second},
		{name: "volatile retries of an earlier process are due at once", opts: []fsm.Option{fsm.WithVolatileRetries()},
			restartAfter: 5 * time.Second, wantRun: true, wantAfter: 15 * time.Second},
		{name: "a retry recorded in the second the engine starts is its own", opts: []fsm.Option{fsm.WithVolatileRetries()},
			restartAfter: 300 * time.Millisecond, wantAfter: 14700 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			first, err := fsm.New(m, fsm.WithClock(clock), fsm.WithVolatileRetries())
			if err != nil {
				t.Fatal(err)
			}
			obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1, UID: "uid-1"}}
			if res := first.Reconcile(t.Context(), obj); res.RequeueAfter != 15*time.Second {
				t.Fatalf("first failure: requeue after %s, want 15s", res.RequeueAfter)
			}
			// The first engine honours its own retry even with volatile retries.
			if res := first.Reconcile(t.Context(), obj); runs != 1 || res.RequeueAfter != 15*time.Second {
				t.Fatalf("the first engine ran its step %d times, requeue after %s; want once, 15s", runs, res.RequeueAfter)
			}

			obj = roundTrip(t, obj)
			clock.Step(tt.restartAfter)
			second, err := fsm.New(m, append([]fsm.Option{fsm.WithClock(clock)}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			res := second.Reconcile(t.Context(), obj)

			if ran := runs == 2; ran != tt.wantRun || res.RequeueAfter != tt.wantAfter {
				t.Fatalf("after the restart: ran %t, requeue after %s; want ran %t, %s", ran, res.RequeueAfter, tt.wantRun, tt.wantAfter)
			}
			wantAttempt := int32(1)
			if tt.wantRun {
				wantAttempt = 2
				if retries != 1 {
					t.Errorf("the run after the restart was no retry run (IsRetry false)")
				}
				// The retry this process scheduled is honoured.
				if res := second.Reconcile(t.Context(), obj); runs != 2 || res.RequeueAfter != 15*time.Second {
					t.Errorf("the second engine ran its own retry early (%d runs, requeue after %s)", runs, res.RequeueAfter)
				}
			}
			if r := obj.Status.Retry; r == nil || r.Attempt != wantAttempt || r.NextRetryAt == nil {
				t.Errorf("retry record %+v, want attempt %d with a next retry", r, wantAttempt)
			}
		})
	}
}

// TestWithoutPollJitter polls a waiting step at exactly the interval it asks for, where the
// default spreads it by ±10%.
func TestWithoutPollJitter(t *testing.T) {
	tests := []struct {
		name string
		opts []fsm.Option
		want time.Duration
	}{
		{name: "spread by default", want: 65400 * time.Millisecond},
		{name: "exact without jitter", opts: []fsm.Option{fsm.WithoutPollJitter()}, want: time.Minute},
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
