package fsm

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// maxReadyMessage bounds the message of the Ready condition.
const maxReadyMessage = 1024

// verdictKind is what a step of the engine concluded about an object, as far as its Ready
// condition is concerned.
type verdictKind int

const (
	// concludedNothing leaves the Ready condition as it is: a poll that found nothing new, a
	// conflict retried quietly, a probe of a Failed object that failed again.
	concludedNothing verdictKind = iota
	// concludedMoved: the object entered a step on its way, or started over.
	concludedMoved
	// concludedWaiting: the step waits for an external process.
	concludedWaiting
	// concludedRetrying: the step failed and runs again after a backoff.
	concludedRetrying
	// concludedPaused: the step waits until a dependency every object shares is back.
	concludedPaused
	// concludedFailed: the step's retries end here, and the object is Failed.
	concludedFailed
	// concludedDone: every step succeeded.
	concludedDone
)

// verdict is what one step of a call concluded: the one input of the Ready condition that the
// status does not hold. When a step concludes several things (it recovered, then moved on), the
// last one counts.
type verdict struct {
	kind verdictKind
	// why says what a waiting step waits for.
	why string
}

// pass is one step's working copy of the engine's status, with what the step concluded so far.
type pass struct {
	*fsmv1.EngineStatus
	verdict verdict
}

// conclude records what the step concluded and returns the Ready condition it leads to, for the
// event that tells the same.
func (p *pass) conclude(kind verdictKind, why string) readiness {
	p.verdict = verdict{kind: kind, why: why}
	r, _ := assess(p.EngineStatus, p.verdict)
	return r
}

// readiness is a Ready condition before it reaches the status: events carry its message whole.
type readiness struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// summarize derives the Ready condition from the engine's status after a step and from what the
// step concluded. It is the one place that decides the condition; ok is false when the
// condition stays as it was. The messages name no attempt and no time (status.retry has them),
// so a retry that fails the same way writes no new condition and its events aggregate.
func summarize(st *fsmv1.EngineStatus, v verdict) (metav1.Condition, bool) {
	r, ok := assess(st, v)
	if !ok {
		return metav1.Condition{}, false
	}
	return metav1.Condition{
		Type: fsmv1.ConditionReady, Status: r.status, Reason: r.reason,
		Message: retry.Sanitize(r.message, maxReadyMessage), ObservedGeneration: st.ObservedGeneration,
	}, true
}

// assess is summarize before the message is sanitized.
func assess(st *fsmv1.EngineStatus, v verdict) (readiness, bool) {
	switch {
	case v.kind == concludedNothing || st.Step == nil:
		return readiness{}, false
	case st.State == fsmv1.StateReady:
		if v.kind != concludedDone {
			// A Ready object checking itself again stays Ready until a step fails.
			return readiness{}, false
		}
		return readiness{status: metav1.ConditionTrue, reason: ReasonReady, message: "All steps succeeded"}, true
	case st.State == fsmv1.StateFailed:
		if v.kind != concludedFailed || st.Retry == nil {
			// A Failed object keeps saying why it failed until it recovers, whatever its probes see.
			return readiness{}, false
		}
		return failed(st.Retry)
	}
	return onTheWay(st, v)
}

// notReady is a Ready condition that is False.
func notReady(reason, format string, args ...any) (readiness, bool) {
	return readiness{status: metav1.ConditionFalse, reason: reason, message: fmt.Sprintf(format, args...)}, true
}

// failed is the Ready condition of an object whose step r ended Failed.
func failed(r *fsmv1.RetryStatus) (readiness, bool) {
	switch reason := failureReason(retry.Class(r.Class)); reason {
	case fsmv1.ReasonUserActionRequired:
		return notReady(reason, "Step %s failed and needs the user to act: %s", r.Step, r.Message)
	case fsmv1.ReasonStepTimedOut:
		return notReady(reason, "Step %s timed out: %s", r.Step, r.Message)
	default:
		return notReady(reason, "Step %s failed until its retries were exhausted: %s", r.Step, r.Message)
	}
}

// onTheWay is the Ready condition of an object that is Pending or Terminating.
func onTheWay(st *fsmv1.EngineStatus, v verdict) (readiness, bool) {
	r := st.Retry
	switch {
	case v.kind == concludedMoved && st.State == fsmv1.StateTerminating:
		return notReady(ReasonDeleting, "Step %s", st.Step.Name)
	case v.kind == concludedMoved:
		return notReady(ReasonProgressing, "Step %s", st.Step.Name)
	case v.kind == concludedWaiting:
		return notReady(ReasonWaiting, "Step %s waits: %s", st.Step.Name, v.why)
	case v.kind == concludedRetrying && r != nil:
		return notReady(ReasonRetrying, "Step %s failed and is retried with backoff: %s", r.Step, r.Message)
	case v.kind == concludedPaused && r != nil:
		return notReady(ReasonPaused, "Step %s waits until a shared dependency is back: %s", r.Step, r.Message)
	}
	return readiness{}, false
}

// failureReason is the reason of the Ready condition of an object whose step failed with an
// error of class c: the user must act on a terminal error, a timeout says so, and every other
// class ends Failed only once its retries are exhausted.
func failureReason(c retry.Class) string {
	switch c {
	case retry.ClassTerminal:
		return fsmv1.ReasonUserActionRequired
	case retry.ClassTimeout:
		return fsmv1.ReasonStepTimedOut
	default:
		return fsmv1.ReasonRetriesExhausted
	}
}
