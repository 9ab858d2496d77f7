package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State is the coarse lifecycle state of an object the engine drives.
// +kubebuilder:validation:Enum=Pending;Ready;Failed;Terminating
type State string

// The states of the status contract.
const (
	StatePending     State = "Pending"
	StateReady       State = "Ready"
	StateFailed      State = "Failed"
	StateTerminating State = "Terminating"
)

// ConditionReady is the summary condition every object driven by the FSM engine carries. The
// engine alone sets it; the other conditions of an object belong to its steps.
const ConditionReady = "Ready"

// Reasons of the Ready condition when an object is Failed. Alerts and runbooks key on them.
const (
	ReasonRetriesExhausted   = "RetriesExhausted"
	ReasonUserActionRequired = "UserActionRequired"
	ReasonStepTimedOut       = "StepTimedOut"
)

// StepStatus says which FSM step an object is in and since when.
type StepStatus struct {
	// Name of the step.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// EnteredAt is when the object entered the step.
	EnteredAt metav1.Time `json:"enteredAt"`

	// Deadline is when a waiting step gives up, if it is waiting for an external process. For the
	// final step, Done, it is when the object is checked again.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
}

// RetryStatus is the durable retry record of a failing step. It is present only while the step
// fails, and it is what lets a restarted or newly elected manager continue the backoff where the
// previous one stopped.
type RetryStatus struct {
	// Step that fails.
	// +kubebuilder:validation:MaxLength=63
	Step string `json:"step"`

	// Attempt is the number of failed attempts that counted against the budget.
	Attempt int32 `json:"attempt"`

	// Limit is the number of attempts the step's policy allows.
	Limit int32 `json:"limit"`

	// Conflicts counts consecutive write conflicts, which are retried without spending the budget.
	// +optional
	Conflicts int32 `json:"conflicts,omitempty"`

	// Class of the last error: Transient, Throttled, Conflict, Terminal or Timeout; Paused while
	// the step waits for a shared dependency (Gardener) to be back, which spends no attempt.
	// +kubebuilder:validation:Enum=Transient;Throttled;Conflict;Terminal;Timeout;Paused
	Class string `json:"class"`

	// Reason is a bounded CamelCase reason for the last error.
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`

	// Message is the last error, sanitized and truncated.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// FirstFailure is when the step first failed in this series of attempts.
	FirstFailure metav1.Time `json:"firstFailure"`

	// LastFailure is when the step failed last.
	LastFailure metav1.Time `json:"lastFailure"`

	// NextRetryAt is the earliest time the step runs again. Nothing acts on the object before it.
	// It is absent while the step is paused: it then runs again once the shared dependency is
	// back, released with jitter.
	// +optional
	NextRetryAt *metav1.Time `json:"nextRetryAt,omitempty"`

	// PausedAt is set while the step waits for a dependency every runtime shares (Gardener, when
	// its circuit breaker is open). A pause spends no attempt, and its length counts neither
	// against the retry budget's duration nor against the step's deadline.
	// +optional
	PausedAt *metav1.Time `json:"pausedAt,omitempty"`
}

// EngineStatus is the part of the status that the FSM engine owns.
type EngineStatus struct {
	// State is the coarse lifecycle state.
	// +optional
	State State `json:"state,omitempty"`

	// Conditions of the object, including the summary Ready condition.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the spec generation the engine last worked on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Step is the FSM step the object is in.
	// +optional
	Step *StepStatus `json:"step,omitempty"`

	// Retry is the retry record of the failing step, present only while it fails.
	// +optional
	Retry *RetryStatus `json:"retry,omitempty"`

	// RetryRequestedAt echoes the value of the manual-retry annotation once it was handled: an
	// RFC 3339 time (see PendingRetryRequest).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RetryRequestedAt string `json:"retryRequestedAt,omitempty"`

	// ObservedInputs fingerprints the inputs outside the object (such as the landscape's ACL
	// addresses) that the machine last started from; when they change, a Ready object runs again.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	ObservedInputs string `json:"observedInputs,omitempty"`
}

// PendingRetryRequest returns the value of the manual-retry annotation, the one called name in
// annotations, when it asks for a retry the engine has not handled yet. The object's API names
// the annotation; any new RFC 3339 time counts, and the engine echoes the value it handled in
// RetryRequestedAt, so a client sees its request was taken once the two are equal. Any other
// value asks for nothing, so that nothing but a short time reaches the status. An empty name
// asks for nothing.
func (s *EngineStatus) PendingRetryRequest(annotations map[string]string, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	v := annotations[name]
	return v, v != s.RetryRequestedAt && IsRetryRequest(v)
}

// maxRetryRequest bounds a manual-retry request, as status.retryRequestedAt does: an RFC 3339
// time with nanoseconds and an offset has 35 characters.
const maxRetryRequest = 64

// IsRetryRequest reports whether v is a manual-retry request the engine takes: an RFC 3339 time.
func IsRetryRequest(v string) bool {
	if v == "" || len(v) > maxRetryRequest {
		return false
	}
	_, err := time.Parse(time.RFC3339, v)
	return err == nil
}
