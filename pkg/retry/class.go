package retry

import (
	"fmt"
	"time"
)

// Class is the error class that decides how a failure is retried.
type Class string

const (
	// ClassTransient covers 5xx replies, timeouts, connection errors,
	// malformed or illegal replies and unknown errors: retry with backoff; each
	// attempt counts against the step's budget.
	ClassTransient Class = "Transient"
	// ClassThrottled covers 429 replies and replies that suggest a delay: wait
	// at least RetryAfter, then retry; each attempt counts against the budget.
	ClassThrottled Class = "Throttled"
	// ClassConflict covers 409 replies to our own writes: re-read and retry
	// soon. It does not spend the budget; the engine bounds it separately.
	ClassConflict Class = "Conflict"
	// ClassTerminal covers an invalid spec, a 400 or 422 reply to our own
	// request, and user or configuration errors: no retry, the user must act.
	ClassTerminal Class = "Terminal"
	// ClassTimeout is a wait that passed its deadline without progress: no
	// retry by this package; the engine fails the runtime.
	ClassTimeout Class = "Timeout"
	// ClassPaused is a call that was never made because a dependency shared by
	// every object is known to be down (an open circuit breaker): the step
	// waits until the dependency is back, without spending the budget.
	ClassPaused Class = "Paused"
)

// Retryable reports whether a failure of this class is retried: true for
// Transient, Throttled, Conflict and Paused, false for Terminal, Timeout and
// anything unknown.
func (c Class) Retryable() bool {
	switch c {
	case ClassTransient, ClassThrottled, ClassConflict, ClassPaused:
		return true
	default:
		return false
	}
}

// known reports whether c is one of the six classes.
func (c Class) known() bool {
	return c.Retryable() || c == ClassTerminal || c == ClassTimeout
}

// Reasons that Classify returns for errors that no step marked. Each is a
// CamelCase constant from this fixed set, so a reason is safe as a metric
// label. Steps add their own CamelCase constants through the constructors.
const (
	ReasonUnknown               = "Unknown"
	ReasonCanceled              = "Canceled"
	ReasonTimeout               = "Timeout"
	ReasonConnectionError       = "ConnectionError"
	ReasonMalformedResponse     = "MalformedResponse"
	ReasonInternalError         = "InternalError"
	ReasonServiceUnavailable    = "ServiceUnavailable"
	ReasonTooManyRequests       = "TooManyRequests"
	ReasonConflict              = "Conflict"
	ReasonBadRequest            = "BadRequest"
	ReasonInvalid               = "Invalid"
	ReasonMethodNotAllowed      = "MethodNotAllowed"
	ReasonRequestEntityTooLarge = "RequestEntityTooLarge"
	ReasonForbidden             = "Forbidden"
	ReasonUnauthorized          = "Unauthorized"
	ReasonNotFound              = "NotFound"
	ReasonAlreadyExists         = "AlreadyExists"
	ReasonGone                  = "Gone"
	ReasonExpired               = "Expired"
	ReasonNotAcceptable         = "NotAcceptable"
	ReasonUnsupportedMediaType  = "UnsupportedMediaType"
	ReasonStoreReadError        = "StoreReadError"
)

// MaxReasonLength is the longest reason Classify passes through from a step;
// it matches the limit of the reason field in the Runtime status.
const MaxReasonLength = 64

// ValidReason reports whether reason is a CamelCase identifier that may be
// used as a reason: an ASCII upper-case letter followed by ASCII letters and
// digits, at most MaxReasonLength long. Classify replaces a step's reason that
// is not valid, so free text never becomes a metric label.
func ValidReason(reason string) bool {
	if reason == "" || len(reason) > MaxReasonLength {
		return false
	}
	if reason[0] < 'A' || reason[0] > 'Z' {
		return false
	}
	for i := 1; i < len(reason); i++ {
		if !isAlnum(reason[i]) {
			return false
		}
	}
	return true
}

func isAlnum(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// Classification is what the engine needs to know about one error.
type Classification struct {
	// Class decides whether and how the failure is retried.
	Class Class
	// Reason is a bounded CamelCase reason from a fixed set (see the Reason
	// constants) or one a step supplied; it is safe as a metric label.
	Reason string
	// RetryAfter is the minimum delay the server or the step suggested, 0 if
	// none. It is only set for retryable classes.
	RetryAfter time.Duration
}

// Error lets a step mark its own error with a class and a reason. Classify
// returns the marking of the outermost *Error in an error's chain, whatever it
// wraps. Fields left at their zero value (or a Reason that is not a valid
// CamelCase identifier) are filled in from the classification of Err.
type Error struct {
	// Class the step chose for the failure.
	Class Class
	// Reason is CamelCase, from a fixed set the step defines.
	Reason string
	// RetryAfter is the minimum delay before the next attempt, 0 if none.
	RetryAfter time.Duration
	// Err is the underlying error; it may be nil.
	Err error
}

// Error returns "<reason>: <err>", or just the reason when Err is nil.
func (e *Error) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = string(e.Class)
	}
	switch {
	case e.Err == nil:
		return reason
	case reason == "":
		return e.Err.Error()
	default:
		return fmt.Sprintf("%s: %v", reason, e.Err)
	}
}

// Unwrap returns the underlying error, so errors.Is and errors.As see through
// the marking.
func (e *Error) Unwrap() error {
	return e.Err
}

// Transient marks err as transient: retried with backoff, spending the budget.
func Transient(reason string, err error) error {
	return &Error{Class: ClassTransient, Reason: reason, Err: err}
}

// Throttled marks err as throttled: retried no sooner than after (a negative
// value counts as 0), spending the budget.
func Throttled(reason string, after time.Duration, err error) error {
	return &Error{Class: ClassThrottled, Reason: reason, RetryAfter: max(after, 0), Err: err}
}

// Terminal marks err as a user or configuration error: it is not retried and
// the user must act.
func Terminal(reason string, err error) error {
	return &Error{Class: ClassTerminal, Reason: reason, Err: err}
}

// Timeout marks err as a wait that passed its deadline without progress: it
// is not retried.
func Timeout(reason string, err error) error {
	return &Error{Class: ClassTimeout, Reason: reason, Err: err}
}

// Paused marks err as a call refused because a shared dependency is down:
// the step runs again once the dependency is back (the engine asks its Gate),
// and the refusal spends no attempt. after is how long the dependency is
// expected to stay down, 0 if unknown.
func Paused(reason string, after time.Duration, err error) error {
	return &Error{Class: ClassPaused, Reason: reason, RetryAfter: max(after, 0), Err: err}
}

// Conflict marks err as a conflict on the step's own write: re-read and retry
// soon, without spending the budget.
func Conflict(reason string, err error) error {
	return &Error{Class: ClassConflict, Reason: reason, Err: err}
}
