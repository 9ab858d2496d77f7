package v1

import (
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// The engine's part of the status is the API of package fsm (pkg/fsm/api/v1), which the Runtime
// and the GardenerCluster embed inline. The names below keep the API of this package whole for
// its clients; they are aliases, so the types and the CRD schemas are the engine's.

// State is the coarse lifecycle state of a Runtime or GardenerCluster, as upstream reports it.
type State = fsmv1.State

// The states of the status contract.
const (
	StatePending     = fsmv1.StatePending
	StateReady       = fsmv1.StateReady
	StateFailed      = fsmv1.StateFailed
	StateTerminating = fsmv1.StateTerminating
)

// ConditionReady is the summary condition every object driven by the FSM engine carries.
const ConditionReady = fsmv1.ConditionReady

// Reasons of the Ready condition when an object is Failed. Alerts and runbooks key on them.
const (
	ReasonRetriesExhausted   = fsmv1.ReasonRetriesExhausted
	ReasonUserActionRequired = fsmv1.ReasonUserActionRequired
	ReasonStepTimedOut       = fsmv1.ReasonStepTimedOut
)

// RetryRequestedAtAnnotation asks the engine to reset the retry budget of the current step and
// retry at once. Any new RFC 3339 time counts, and nothing else: the admission policy refuses
// other values, and the engine ignores them. The handled value is echoed in status. The
// controllers name it to the engine (fsm.WithRetryAnnotation).
const RetryRequestedAtAnnotation = "infrastructuremanager.kyma-project.io/retry-requested-at"

// StepStatus says which FSM step an object is in and since when.
type StepStatus = fsmv1.StepStatus

// RetryStatus is the durable retry record of a failing step.
type RetryStatus = fsmv1.RetryStatus

// EngineStatus is the part of the status that the FSM engine owns.
type EngineStatus = fsmv1.EngineStatus

// EngineStatus returns the part of the Runtime's status the FSM engine owns.
func (r *Runtime) EngineStatus() *EngineStatus { return &r.Status.EngineStatus }

// EngineStatus returns the part of the GardenerCluster's status the FSM engine owns.
func (g *GardenerCluster) EngineStatus() *EngineStatus { return &g.Status.EngineStatus }
