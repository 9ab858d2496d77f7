package fsm

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// TestSummarize derives the Ready condition from statuses and verdicts, without an engine or an
// API server.
func TestSummarize(t *testing.T) {
	failing := func(class, message string) *fsmv1.RetryStatus {
		return &fsmv1.RetryStatus{Step: "Create", Class: class, Reason: "InfraQuotaExceeded", Message: message, Attempt: 2, Limit: 4}
	}
	tests := []struct {
		name    string             // the situation
		state   fsmv1.State        // the object's state after the step
		step    string             // the step it is in
		retry   *fsmv1.RetryStatus // its retry record
		verdict verdict            // what the step concluded
		want    *metav1.Condition  // the Ready condition; nil when it stays as it was
	}{
		{name: "a poll that found nothing new", state: fsmv1.StatePending, step: "Create",
			verdict: verdict{kind: concludedNothing}},
		{name: "a step entered on the way", state: fsmv1.StatePending, step: "Create",
			verdict: verdict{kind: concludedMoved},
			want:    &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonProgressing, Message: "Step Create"}},
		{name: "a deletion step entered", state: fsmv1.StateTerminating, step: "Teardown",
			verdict: verdict{kind: concludedMoved},
			want:    &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonDeleting, Message: "Step Teardown"}},
		{name: "a Ready object checking itself again", state: fsmv1.StateReady, step: "Create",
			verdict: verdict{kind: concludedMoved}},
		{name: "a Ready object waiting while it checks itself again", state: fsmv1.StateReady, step: "AwaitReady",
			verdict: verdict{kind: concludedWaiting, why: "shoot is reconciling"}},
		{name: "a waiting step", state: fsmv1.StatePending, step: "AwaitReady",
			verdict: verdict{kind: concludedWaiting, why: "shoot is creating"},
			want:    &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonWaiting, Message: "Step AwaitReady waits: shoot is creating"}},
		{name: "a failure retried with backoff", state: fsmv1.StatePending, step: "Create", retry: failing("Transient", "quota exceeded"),
			verdict: verdict{kind: concludedRetrying},
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonRetrying,
				Message: "Step Create failed and is retried with backoff: quota exceeded"}},
		{name: "a step paused for a shared dependency", state: fsmv1.StatePending, step: "Create", retry: failing("Paused", "circuit open"),
			verdict: verdict{kind: concludedPaused},
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonPaused,
				Message: "Step Create waits until a shared dependency is back: circuit open"}},
		{name: "a budget exhausted", state: fsmv1.StateFailed, step: "Create", retry: failing("Transient", "quota exceeded"),
			verdict: verdict{kind: concludedFailed},
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: fsmv1.ReasonRetriesExhausted,
				Message: "Step Create failed until its retries were exhausted: quota exceeded"}},
		{name: "a conflict storm exhausted", state: fsmv1.StateFailed, step: "Create", retry: failing("Conflict", "modified"),
			verdict: verdict{kind: concludedFailed},
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: fsmv1.ReasonRetriesExhausted,
				Message: "Step Create failed until its retries were exhausted: modified"}},
		{name: "a terminal error", state: fsmv1.StateFailed, step: "Create", retry: failing("Terminal", "unauthorized"),
			verdict: verdict{kind: concludedFailed},
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: fsmv1.ReasonUserActionRequired,
				Message: "Step Create failed and needs the user to act: unauthorized"}},
		{name: "a timeout", state: fsmv1.StateFailed, step: "AwaitReady", retry: &fsmv1.RetryStatus{Step: "AwaitReady", Class: "Timeout", Message: "no progress"},
			verdict: verdict{kind: concludedFailed},
			want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: fsmv1.ReasonStepTimedOut,
				Message: "Step AwaitReady timed out: no progress"}},
		{name: "a probe of a Failed object that failed otherwise", state: fsmv1.StateFailed, step: "Create", retry: failing("Terminal", "other"),
			verdict: verdict{kind: concludedNothing}},
		{name: "a probe of a Failed object that started the process again", state: fsmv1.StateFailed, step: "AwaitReady", retry: failing("Transient", "x"),
			verdict: verdict{kind: concludedWaiting, why: "shoot is creating"}},
		{name: "every step succeeded", state: fsmv1.StateReady, step: StepDone,
			verdict: verdict{kind: concludedDone},
			want:    &metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonReady, Message: "All steps succeeded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &fsmv1.EngineStatus{State: tc.state, ObservedGeneration: 3, Step: &fsmv1.StepStatus{Name: tc.step}, Retry: tc.retry}
			got, ok := summarize(st, tc.verdict)
			switch {
			case tc.want == nil && ok:
				t.Errorf("got %+v, want the condition as it was", got)
			case tc.want != nil && !ok:
				t.Errorf("the condition stays as it was, want %+v", *tc.want)
			case tc.want != nil:
				want := *tc.want
				want.Type, want.ObservedGeneration = fsmv1.ConditionReady, 3
				if got != want {
					t.Errorf("got %+v, want %+v", got, want)
				}
			}
		})
	}
}

// TestSummarizeBoundsTheMessage gives a message longer than a condition takes.
func TestSummarizeBoundsTheMessage(t *testing.T) {
	st := &fsmv1.EngineStatus{State: fsmv1.StatePending, Step: &fsmv1.StepStatus{Name: "AwaitReady"}}
	got, ok := summarize(st, verdict{kind: concludedWaiting, why: strings.Repeat("x", 2000)})
	if n := utf8.RuneCountInString(got.Message); !ok || n > maxReadyMessage {
		t.Errorf("message of %d characters (set %v), want at most %d", n, ok, maxReadyMessage)
	}
}
