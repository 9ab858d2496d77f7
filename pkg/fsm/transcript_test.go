package fsm_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// start is the fake clock's start; transcripts show times relative to it.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testPolicy is short enough that a transcript shows the whole budget.
var testPolicy = retry.Policy{Initial: 5 * time.Second, Factor: 2, Cap: time.Minute, MaxAttempts: 4, MaxDuration: 10 * time.Minute, Jitter: 0.5}

// harness runs the example machine Prepare -> Create -> AwaitReady on a widget, with scripted
// outcomes per step, a fake clock, and the status round-tripped through JSON between calls as
// the API server would store it.
type harness struct {
	t       *testing.T
	clock   *clocktesting.FakeClock
	engine  *fsm.Engine[*widget]
	obj     *widget
	script  map[string][]fsm.Outcome // outcomes a step returns, in order; then it succeeds
	ran     string                   // what the last call ran
	events  []string
	out     strings.Builder
	calls   int
	maxStep time.Duration         // the longest the clock moves between calls
	actions map[int]func(*widget) // changes the world before the numbered call
	inputs  string                // the fingerprint of the outside inputs
	gate    *fakeGate             // the shared dependency, available unless closed
}

// fakeGate is a shared dependency that a transcript closes and opens; once open, it releases
// the object release after it opened.
type fakeGate struct {
	clock    *clocktesting.FakeClock
	closed   bool
	openedAt time.Time
	release  time.Duration
}

func (g *fakeGate) Open() bool { return !g.closed }

func (g *fakeGate) Wait(string) time.Duration {
	if g.closed {
		return 30 * time.Second
	}
	return max(g.openedAt.Add(g.release).Sub(g.clock.Now()), 0)
}

func (g *fakeGate) setClosed(closed bool) {
	g.closed = closed
	if !closed {
		g.openedAt = g.clock.Now()
	}
}

func newHarness(t *testing.T, script map[string][]fsm.Outcome) *harness {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(start), script: script, maxStep: 24 * time.Hour, actions: map[int]func(*widget){}}
	h.gate = &fakeGate{clock: h.clock, release: 12 * time.Second}
	step := func(name string, success fsm.Outcome) fsm.StepFunc[*widget] {
		return func(ctx context.Context, _ *widget) fsm.Outcome {
			out := success
			if s := h.script[name]; len(s) > 0 {
				out, h.script[name] = s[0], s[1:]
			}
			h.ran = name + " -> " + out.String()
			if fsm.IsRetry(ctx) {
				h.ran = name + " (retry) -> " + out.String()
			}
			return out
		}
	}
	m := fsm.Machine[*widget]{
		Name:  "example",
		Start: "Prepare",
		Steps: []fsm.Step[*widget]{
			{Name: "Prepare", Run: step("Prepare", fsm.Next("Create")), Next: []string{"Create"}},
			{Name: "Create", Run: step("Create", fsm.Next("AwaitReady")), Next: []string{"AwaitReady"}},
			{Name: "AwaitReady", Run: step("AwaitReady", fsm.Done()), Deadline: 2 * time.Minute},
		},
		DefaultPolicy: testPolicy,
	}
	engine, err := fsm.New(m,
		fsm.WithClock(h.clock),
		fsm.WithRand(func() float64 { return 0.5 }),
		fsm.WithProbeInterval(time.Hour),
		fsm.WithResync(30*time.Minute),
		fsm.WithConflictLimit(3, time.Second),
		fsm.WithInputs(func(client.Object) string { return h.inputs }),
		fsm.WithGate(h.gate),
		fsm.WithRetryAnnotation(retryAnnotation),
		fsm.WithRecorder(fsm.RecorderFunc(func(_ runtime.Object, typ, reason, msg string) {
			h.events = append(h.events, fmt.Sprintf("%s %s %q", typ, reason, msg))
		})),
	)
	if err != nil {
		t.Fatal(err)
	}
	h.engine = engine
	h.obj = &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1, UID: "uid-1"}}
	return h
}

// runUntil calls the engine until the machine is Ready, or Failed twice in a row, or maxCalls,
// advancing the fake clock by each requeue.
func (h *harness) runUntil(maxCalls int, stop func(*widget) bool) {
	for range maxCalls {
		h.calls++
		if a := h.actions[h.calls]; a != nil {
			a(h.obj)
		}
		h.ran, h.events = "nothing (not due)", nil
		res := h.engine.Reconcile(context.Background(), h.obj)
		h.persist()
		h.record(res.RequeueAfter)
		if stop(h.obj) {
			return
		}
		// The next step runs at once; anything else waits, at most maxStep, so a transcript can
		// show what happens when the world changes before a retry is due.
		if res.RequeueAfter > time.Millisecond {
			h.clock.Step(min(res.RequeueAfter, h.maxStep))
		}
	}
}

// persist round-trips the object through JSON, as the API server stores it.
func (h *harness) persist() {
	data, err := json.Marshal(h.obj)
	if err != nil {
		h.t.Fatal(err)
	}
	fresh := &widget{}
	if err := json.Unmarshal(data, fresh); err != nil {
		h.t.Fatal(err)
	}
	h.obj = fresh
}

func (h *harness) record(after time.Duration) {
	st := h.obj.Status.EngineStatus
	rel := func(t *metav1.Time) string {
		if t == nil {
			return "-"
		}
		return "+" + t.Sub(start).String()
	}
	fmt.Fprintf(&h.out, "call %d at +%s: ran %s; requeue after %s\n", h.calls, h.clock.Now().Sub(start), h.ran, after)
	fmt.Fprintf(&h.out, "  state=%s step=%s entered=%s\n", st.State, st.Step.Name, rel(&st.Step.EnteredAt))
	if r := st.Retry; r != nil {
		fmt.Fprintf(&h.out, "  retry: step=%s attempt=%d/%d conflicts=%d class=%s reason=%s first=%s last=%s next=%s",
			r.Step, r.Attempt, r.Limit, r.Conflicts, r.Class, r.Reason, rel(&r.FirstFailure), rel(&r.LastFailure), rel(r.NextRetryAt))
		if r.PausedAt != nil {
			fmt.Fprintf(&h.out, " paused=%s", rel(r.PausedAt))
		}
		fmt.Fprintln(&h.out)
		fmt.Fprintf(&h.out, "  retry message: %s\n", r.Message)
	}
	if c := meta.FindStatusCondition(st.Conditions, fsmv1.ConditionReady); c != nil {
		fmt.Fprintf(&h.out, "  Ready=%s reason=%s: %s\n", c.Status, c.Reason, c.Message)
	}
	for _, e := range h.events {
		fmt.Fprintf(&h.out, "  event: %s\n", e)
	}
}

func ready(o *widget) bool  { return o.Status.State == fsmv1.StateReady }
func failed(o *widget) bool { return o.Status.State == fsmv1.StateFailed }

var (
	errInternal = apierrors.NewInternalError(errors.New("etcd leader changed"))
	errQuota    = retry.Transient("InfraQuotaExceeded", errors.New("quota exceeded for instance family"))
	errConflict = apierrors.NewConflict(schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}, "rt", errors.New("the object has been modified"))
	errThrottle = apierrors.NewTooManyRequests("slow down", 40)
	errUser     = retry.Terminal("InfraUnauthorized", errors.New("secret binding lacks permissions"))
	errPaused   = retry.Paused("GardenerCircuitOpen", 30*time.Second, errors.New("gardener circuit breaker is open"))
)

func repeat(o fsm.Outcome, n int) []fsm.Outcome {
	out := make([]fsm.Outcome, n)
	for i := range out {
		out[i] = o
	}
	return out
}

// TestTranscripts runs scripted machines and compares what happened, call by call, with the
// reviewed transcripts in testdata/. Regenerate with: go test ./pkg/fsm -run Transcripts -update.
func TestTranscripts(t *testing.T) {
	cases := []struct {
		name   string                         // golden file name
		script map[string][]fsm.Outcome       // outcomes per step, before the step succeeds
		setup  func(h *harness)               // world changes at given calls
		calls  int                            // call budget
		stop   func(*widget) bool             // when the transcript ends
		check  func(t *testing.T, h *harness) // the facts the transcript must show
	}{
		{
			name: "success", calls: 10, stop: ready,
			check: func(t *testing.T, h *harness) { expectState(t, h, fsmv1.StateReady, "Done") },
		},
		{
			name:   "transient-then-success",
			script: map[string][]fsm.Outcome{"Create": {fsm.Fail(errInternal), fsm.Fail(errInternal)}},
			calls:  10, stop: ready,
			check: func(t *testing.T, h *harness) { expectState(t, h, fsmv1.StateReady, "Done") },
		},
		{
			name:   "exhaustion",
			script: map[string][]fsm.Outcome{"Create": repeat(fsm.Fail(errQuota), 10)},
			calls:  10, stop: failed,
			check: func(t *testing.T, h *harness) {
				expectState(t, h, fsmv1.StateFailed, "Create")
				expectReason(t, h, fsmv1.ReasonRetriesExhausted)
				if a := h.obj.Status.Retry.Attempt; a != testPolicy.MaxAttempts {
					t.Errorf("attempt: got %d, want %d", a, testPolicy.MaxAttempts)
				}
			},
		},
		{
			name:   "terminal",
			script: map[string][]fsm.Outcome{"Create": {fsm.Fail(errUser)}},
			calls:  10, stop: failed,
			check: func(t *testing.T, h *harness) {
				expectReason(t, h, fsmv1.ReasonUserActionRequired)
				if a := h.obj.Status.Retry.Attempt; a != 0 {
					t.Errorf("a terminal error spent %d attempts, want 0", a)
				}
			},
		},
		{
			name:   "throttled",
			script: map[string][]fsm.Outcome{"Create": {fsm.Fail(errThrottle)}},
			calls:  10, stop: ready,
			check: func(t *testing.T, h *harness) {
				if !strings.Contains(h.out.String(), "requeue after 40s") {
					t.Error("the throttled retry did not wait the 40s the server asked for")
				}
			},
		},
		{
			name:   "conflict-storm",
			script: map[string][]fsm.Outcome{"Create": repeat(fsm.Fail(errConflict), 6)},
			calls:  20, stop: ready,
			check: func(t *testing.T, h *harness) {
				if !strings.Contains(h.out.String(), "attempt=1/4 conflicts=0 class=Conflict") {
					t.Error("a conflict storm beyond the limit did not start spending the budget")
				}
			},
		},
		{
			name:   "timeout",
			script: map[string][]fsm.Outcome{"AwaitReady": repeat(fsm.Wait(30*time.Second, "shoot is creating"), 20)},
			calls:  20, stop: failed,
			check: func(t *testing.T, h *harness) { expectReason(t, h, fsmv1.ReasonStepTimedOut) },
		},
		{
			// A step that restarts an external process after each failure (Gardener's
			// operation=retry): waiting in between does not reset the budget.
			name: "external-retry-exhaustion",
			script: map[string][]fsm.Outcome{"AwaitReady": {
				fsm.Fail(errQuota), fsm.Wait(10*time.Second, "retry requested"),
				fsm.Fail(errQuota), fsm.Wait(10*time.Second, "retry requested"),
				fsm.Fail(errQuota), fsm.Wait(10*time.Second, "retry requested"),
				fsm.Fail(errQuota),
			}},
			calls: 20, stop: failed,
			check: func(t *testing.T, h *harness) {
				expectReason(t, h, fsmv1.ReasonRetriesExhausted)
				if a := h.obj.Status.Retry.Attempt; a != testPolicy.MaxAttempts {
					t.Errorf("attempt: got %d, want %d", a, testPolicy.MaxAttempts)
				}
			},
		},
		{
			name:   "manual-retry-after-exhaustion",
			script: map[string][]fsm.Outcome{"Create": repeat(fsm.Fail(errQuota), 10)},
			setup: func(h *harness) {
				h.maxStep = 10 * time.Minute
				h.script["Create"] = h.script["Create"][:4]
				h.actions[7] = func(o *widget) {
					o.Annotations = map[string]string{retryAnnotation: "2026-01-01T00:05:00Z"}
				}
			},
			calls: 15, stop: ready,
			check: func(t *testing.T, h *harness) {
				expectState(t, h, fsmv1.StateReady, "Done")
				if h.obj.Status.RetryRequestedAt != "2026-01-01T00:05:00Z" {
					t.Errorf("the handled manual retry was not echoed: %q", h.obj.Status.RetryRequestedAt)
				}
			},
		},
		{
			name:   "probe-recovery",
			script: map[string][]fsm.Outcome{"Create": repeat(fsm.Fail(errQuota), 5)},
			calls:  15, stop: ready,
			check: func(t *testing.T, h *harness) {
				expectState(t, h, fsmv1.StateReady, "Done")
				if !strings.Contains(h.out.String(), "Recovered") {
					t.Error("no Recovered event after the probe succeeded")
				}
			},
		},
		{
			name:   "spec-change-mid-retry",
			script: map[string][]fsm.Outcome{"Create": repeat(fsm.Fail(errQuota), 2)},
			setup: func(h *harness) {
				h.actions[4] = func(o *widget) { o.Generation = 2 }
			},
			calls: 15, stop: ready,
			check: func(t *testing.T, h *harness) {
				expectState(t, h, fsmv1.StateReady, "Done")
				if h.obj.Status.ObservedGeneration != 2 {
					t.Errorf("observed generation: got %d, want 2", h.obj.Status.ObservedGeneration)
				}
			},
		},
		{
			// Gardener fails once (an attempt is spent), then its circuit opens for longer than
			// the whole budget (4 attempts, 10 minutes): the refusal pauses the step, nothing
			// runs while the gate is closed, no attempt is spent, and the budget's clock and
			// the retry resume where they stopped once the gate releases the object.
			name:   "outage-pause",
			script: map[string][]fsm.Outcome{"Create": {fsm.Fail(errInternal), fsm.Fail(errPaused)}},
			setup: func(h *harness) {
				h.actions[3] = func(*widget) { h.gate.setClosed(true) }
				h.actions[43] = func(*widget) { h.gate.setClosed(false) }
			},
			calls: 50, stop: ready,
			check: func(t *testing.T, h *harness) {
				expectState(t, h, fsmv1.StateReady, "Done")
				out := h.out.String()
				if strings.Contains(out, "state=Failed") || strings.Contains(out, "attempt=2/") {
					t.Error("the outage spent the budget")
				}
				if n := strings.Count(out, "ran Create"); n != 3 {
					t.Errorf("Create ran %d times, want 3 (the failure, the refused retry, the released retry)", n)
				}
				if !strings.Contains(out, "ran Create (retry) -> Next(AwaitReady)") {
					t.Error("the released step did not run as the retry of its failure")
				}
			},
		},
		{
			// The circuit opens while a step waits for Gardener: its deadline (2 minutes)
			// passes during the outage, which pauses the step instead of failing it; released,
			// the step gets its deadline back, extended by the pause.
			name:   "outage-deadline",
			script: map[string][]fsm.Outcome{"AwaitReady": repeat(fsm.Wait(30*time.Second, "shoot is creating"), 6)},
			setup: func(h *harness) {
				h.actions[5] = func(*widget) { h.gate.setClosed(true) }
				h.actions[30] = func(*widget) { h.gate.setClosed(false) }
			},
			calls: 40, stop: ready,
			check: func(t *testing.T, h *harness) {
				expectState(t, h, fsmv1.StateReady, "Done")
				if !strings.Contains(h.out.String(), "reason="+fsm.ReasonDependencyDown) {
					t.Error("the deadline that passed during the outage did not pause the step")
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.script)
			if tc.setup != nil {
				tc.setup(h)
			}
			h.runUntil(tc.calls, tc.stop)
			if !tc.stop(h.obj) {
				t.Errorf("the transcript did not reach its end within %d calls", tc.calls)
			}
			tc.check(t, h)
			compareGolden(t, filepath.Join("testdata", tc.name+".golden"), h.out.String())
		})
	}
}

func expectState(t *testing.T, h *harness, state fsmv1.State, step string) {
	t.Helper()
	st := h.obj.Status
	if st.State != state || st.Step.Name != step {
		t.Errorf("got state %s in step %s, want %s in %s", st.State, st.Step.Name, state, step)
	}
	if state == fsmv1.StateReady && st.Retry != nil {
		t.Errorf("a Ready object kept its retry record: %+v", st.Retry)
	}
}

func expectReason(t *testing.T, h *harness, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(h.obj.Status.Conditions, fsmv1.ConditionReady)
	if c == nil || c.Reason != reason || h.obj.Status.State != fsmv1.StateFailed {
		t.Errorf("got Ready condition %+v in state %s, want Failed with reason %s", c, h.obj.Status.State, reason)
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("transcript differs from %s (review, then regenerate with -update):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
