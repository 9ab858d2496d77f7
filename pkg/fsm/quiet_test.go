package fsm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// checker is a one-step machine whose step counts its runs and sets a condition to what
// drifted says.
type checker struct {
	runs    int
	drifted string
}

func (c *checker) engine(t *testing.T, clock *clocktesting.FakeClock) *fsm.Engine[*widget] {
	t.Helper()
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: "checker", Start: "Check",
		Steps: []fsm.Step[*widget]{{Name: "Check", Run: func(_ context.Context, w *widget) fsm.Outcome {
			c.runs++
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Checked", Status: metav1.ConditionTrue, Reason: "Found", Message: c.drifted})
			return fsm.Done()
		}}},
	}, fsm.WithClock(clock), fsm.WithResync(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func statusOf(t *testing.T, w *widget) string {
	t.Helper()
	b, err := json.Marshal(w.Status)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestQuietRecheckLeavesTheStatus: a re-check that finds what the last one found leaves the
// status as it was, to the byte, and the next re-check comes one interval after it, not at once.
// A re-check that finds something new records when it ran.
func TestQuietRecheckLeavesTheStatus(t *testing.T) {
	clock := clocktesting.NewFakeClock(start)
	c := &checker{drifted: "nothing"}
	e := c.engine(t, clock)
	w := newWidget()
	e.Reconcile(t.Context(), w)
	if w.Status.State != fsmv1.StateReady {
		t.Fatalf("state = %s after the first pass, want Ready", w.Status.State)
	}
	ready := statusOf(t, w)

	clock.Step(40 * time.Minute)
	res := e.Reconcile(t.Context(), w)
	if c.runs != 2 {
		t.Fatalf("the step ran %d times, want 2: the re-check was due", c.runs)
	}
	if got := statusOf(t, w); got != ready {
		t.Errorf("a quiet re-check changed the status:\n got %s\nwant %s", got, ready)
	}
	if res.RequeueAfter < 27*time.Minute || res.RequeueAfter > 33*time.Minute {
		t.Errorf("next re-check in %s, want one interval (27m to 33m)", res.RequeueAfter)
	}
	// The status still says Done was entered 40 minutes ago: the engine remembers the re-check.
	clock.Step(time.Minute)
	e.Reconcile(t.Context(), w)
	if c.runs != 2 {
		t.Errorf("the step ran again a minute after a quiet re-check (%d runs)", c.runs)
	}

	clock.Step(40 * time.Minute)
	c.drifted = "a change"
	e.Reconcile(t.Context(), w)
	if c.runs != 3 {
		t.Fatalf("the step ran %d times, want 3", c.runs)
	}
	if got := w.Status.Step.EnteredAt.Time; !got.Equal(clock.Now()) {
		t.Errorf("a re-check that changed a condition left Done entered at %s, want %s", got, clock.Now())
	}
}

// TestRestartSpreadsTheFirstRechecks: a new engine (a restarted manager) meets a fleet that
// entered Done long before it started. It spreads their first re-checks over one interval, by
// uid, instead of running them all at once. An object that entered Done after it started waits
// its full interval.
func TestRestartSpreadsTheFirstRechecks(t *testing.T) {
	clock := clocktesting.NewFakeClock(start)
	c := &checker{drifted: "nothing"}
	old := c.engine(t, clock)
	const n = 200
	fleet := make([]*widget, n)
	for i := range fleet {
		w := newWidget()
		w.Name, w.UID = fmt.Sprintf("w-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
		old.Reconcile(t.Context(), w)
		fleet[i] = w
	}

	clock.Step(5 * time.Hour)
	restarted := c.engine(t, clock)
	c.runs = 0
	var buckets [4]int
	for _, w := range fleet {
		res := restarted.Reconcile(t.Context(), w)
		if res.RequeueAfter <= 0 || res.RequeueAfter > 30*time.Minute {
			t.Fatalf("%s: first re-check in %s, want within one interval", w.Name, res.RequeueAfter)
		}
		buckets[int(res.RequeueAfter/(30*time.Minute/4))]++
	}
	if c.runs > n/20 {
		t.Errorf("%d of %d objects were re-checked at the start, want about none", c.runs, n)
	}
	for i, b := range buckets {
		if b < n/8 {
			t.Errorf("quarter %d of the interval holds %d of %d first re-checks (%v), want them spread", i, b, n, buckets)
		}
	}

	fresh := newWidget()
	fresh.Name, fresh.UID = "fresh", "uid-fresh"
	restarted.Reconcile(t.Context(), fresh)
	if res := restarted.Reconcile(t.Context(), fresh); res.RequeueAfter < 27*time.Minute {
		t.Errorf("an object Ready since the start is re-checked in %s, want a whole interval", res.RequeueAfter)
	}
}
