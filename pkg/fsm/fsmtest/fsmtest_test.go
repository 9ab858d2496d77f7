package fsmtest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

func TestResultOf(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		out          fsm.Outcome
		want         fsmtest.Result
	}{
		{name: "next", reason: "a step that moves on names the step", out: fsm.Next("B"), want: fsmtest.Next("B")},
		{name: "wait", reason: "a wait keeps its interval, not its text", out: fsm.Wait(time.Minute, "something"), want: fsmtest.Wait(time.Minute)},
		{name: "done", reason: "done has no interval", out: fsm.Done(), want: fsmtest.Done()},
		{name: "done until", reason: "done until keeps its interval", out: fsm.DoneUntil(time.Hour), want: fsmtest.DoneUntil(time.Hour)},
		{
			name: "terminal", reason: "a step's marking is found through wrapping",
			out:  fsm.Fail(fmt.Errorf("context: %w", retry.Terminal("Refused", errors.New("no")))),
			want: fsmtest.Terminal("Refused"),
		},
		{
			name: "transient", reason: "a transient marking is not a plain error",
			out: fsm.Fail(retry.Transient("Down", nil)), want: fsmtest.Transient("Down"),
		},
		{
			name: "marked throttled", reason: "any class can be marked",
			out: fsm.Fail(retry.Throttled("Slow", time.Second, nil)), want: fsmtest.Marked(retry.ClassThrottled, "Slow"),
		},
		{
			name: "plain", reason: "an unmarked error is classified from what it wraps",
			out: fsm.Fail(errors.New("boom")), want: fsmtest.Plain(retry.ClassTransient, retry.ReasonUnknown),
		},
		{
			name: "zero", reason: "the zero Outcome is invalid and carries no error",
			out: fsm.Outcome{}, want: fsmtest.Result{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsmtest.Because(t, tc.reason)
			fsmtest.Check(t, tc.out, tc.want)
		})
	}
}

// TestKindString: a kind prints as the constructor that makes it.
func TestKindString(t *testing.T) {
	for k, want := range map[fsm.Kind]string{
		fsm.KindInvalid: "Invalid", fsm.KindNext: "Next", fsm.KindWait: "Wait", fsm.KindDone: "Done", fsm.KindFail: "Fail",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d) %q, want %q", int(k), got, want)
		}
	}
}

// TestOutcomeAccessors: the accessors read back what the constructors put in.
func TestOutcomeAccessors(t *testing.T) {
	w := fsm.Wait(time.Minute, "the shoot")
	if w.Kind() != fsm.KindWait || w.Poll() != time.Minute || w.Why() != "the shoot" || w.NextStep() != "" || w.Err() != nil {
		t.Errorf("Wait reads as %v %s %q %q %v", w.Kind(), w.Poll(), w.Why(), w.NextStep(), w.Err())
	}
	n := fsm.Next("B")
	if n.Kind() != fsm.KindNext || n.NextStep() != "B" || n.Poll() != 0 || n.Why() != "" {
		t.Errorf("Next reads as %v %q %s %q", n.Kind(), n.NextStep(), n.Poll(), n.Why())
	}
}

// TestCheckReportsADifference: Check fails a test whose outcome differs.
func TestCheckReportsADifference(t *testing.T) {
	rec := &recorder{TB: t}
	if fsmtest.Check(rec, fsm.Next("A"), fsmtest.Next("B")) || !rec.failed {
		t.Error("Check passed Next(A) as Next(B)")
	}
}

// recorder notes a failure instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}
