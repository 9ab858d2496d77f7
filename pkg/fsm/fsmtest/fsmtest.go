// Package fsmtest lets a test assert a step's Outcome by value: what the step asks of the engine,
// and how the engine classifies its error. It compares no error text.
package fsmtest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Result is an Outcome as comparable values.
type Result struct {
	// Kind says what the outcome asks of the engine.
	Kind fsm.Kind
	// Next is the step a Next outcome moves to.
	Next string
	// Poll is the interval of a Wait or a DoneUntil.
	Poll time.Duration
	// Class and Reason are what retry.Classify makes of a failure's error.
	Class  retry.Class
	Reason string
	// Marked says the step marked the error with a class of its own (a *retry.Error).
	// A plain error gets its class from what it wraps, such as an API status.
	Marked bool
}

// ResultOf reads o by value.
func ResultOf(o fsm.Outcome) Result {
	r := Result{Kind: o.Kind(), Next: o.NextStep(), Poll: o.Poll()}
	if err := o.Err(); err != nil {
		c := retry.Classify(err)
		r.Class, r.Reason = c.Class, c.Reason
		var marked *retry.Error
		r.Marked = errors.As(err, &marked)
	}
	return r
}

// Next is a step that moves on to step.
func Next(step string) Result { return Result{Kind: fsm.KindNext, Next: step} }

// Wait is a step that waits, looking again after poll.
func Wait(poll time.Duration) Result { return Result{Kind: fsm.KindWait, Poll: poll} }

// Done is a step that ends the machine.
func Done() Result { return Result{Kind: fsm.KindDone} }

// DoneUntil is a step that ends the machine and asks for the next check after d.
func DoneUntil(d time.Duration) Result { return Result{Kind: fsm.KindDone, Poll: d} }

// Terminal is a step that fails with an error it marked terminal with reason.
func Terminal(reason string) Result { return Marked(retry.ClassTerminal, reason) }

// Transient is a step that fails with an error it marked transient with reason.
func Transient(reason string) Result { return Marked(retry.ClassTransient, reason) }

// Marked is a step that fails with an error it marked with class and reason.
func Marked(class retry.Class, reason string) Result {
	return Result{Kind: fsm.KindFail, Class: class, Reason: reason, Marked: true}
}

// Plain is a step that fails with an error it did not mark.
// retry.Classify finds class and reason in what the error wraps.
func Plain(class retry.Class, reason string) Result {
	return Result{Kind: fsm.KindFail, Class: class, Reason: reason}
}

// Check fails the test unless got reads as want, and prints the difference.
// It reports whether they match, so a test can stop on a failed precondition.
func Check(t testing.TB, got fsm.Outcome, want Result) bool {
	t.Helper()
	diff := cmp.Diff(want, ResultOf(got))
	if diff != "" {
		t.Errorf("outcome %s (-want +got):\n%s", got, diff)
	}
	return diff == ""
}

// Because records why a table case exists, and logs it when the case fails.
// A case that gives no reason fails.
func Because(t testing.TB, reason string) {
	t.Helper()
	if reason == "" {
		t.Error("the case does not say why it exists")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("this case exists because %s", reason)
		}
	})
}
