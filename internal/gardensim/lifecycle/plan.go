package lifecycle

import (
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
)

// step is what the controller does with a shoot in one pass.
type step int

const (
	// stepIdle: nothing to do until the shoot changes.
	stepIdle step = iota
	// stepStart: begin a new operation of action.op.
	stepStart
	// stepAdvance: move the running operation on.
	stepAdvance
	// stepWait: an Error waits for its retry at action.at.
	stepWait
	// stepFinalize: the deletion succeeded, remove the finalizer.
	stepFinalize
)

// action is the decision of plan.
type action struct {
	step step
	op   gardencorev1beta1.LastOperationType
	at   time.Time
}

// operation is the controller's memory of the operation it runs for a shoot.
type operation struct {
	// typ is the operation type.
	typ gardencorev1beta1.LastOperationType
	// started is when the operation (this attempt) began.
	started time.Time
	// verdict is how it ends.
	verdict Verdict
	// retryAt is set once the operation ended in Error.
	retryAt time.Time
}

// plan decides what to do with shoot, given the operation the controller
// remembers for it (nil if none) and the default wait before an Error is
// retried. It reads the world only from its arguments.
func plan(shoot *gardencorev1beta1.Shoot, op *operation, now time.Time, retryDelay time.Duration) action {
	last := shoot.Status.LastOperation
	deleting := shoot.DeletionTimestamp != nil
	switch {
	case deleting && (last == nil || last.Type != gardencorev1beta1.LastOperationTypeDelete):
		return start(gardencorev1beta1.LastOperationTypeDelete)
	case last == nil:
		return start(gardencorev1beta1.LastOperationTypeCreate)
	case retryRequested(shoot):
		return start(last.Type)
	case !deleting && shoot.Generation != shoot.Status.ObservedGeneration:
		return start(followUp(last))
	}
	return planState(last, op, now, retryDelay)
}

// planState decides from the state of the last operation.
func planState(last *gardencorev1beta1.LastOperation, op *operation, now time.Time, retryDelay time.Duration) action {
	switch last.State {
	case gardencorev1beta1.LastOperationStateProcessing:
		if op == nil || op.typ != last.Type {
			return start(last.Type)
		}
		return action{step: stepAdvance, op: last.Type}
	case gardencorev1beta1.LastOperationStateError:
		at := last.LastUpdateTime.Add(retryDelay)
		if op != nil && !op.retryAt.IsZero() {
			at = op.retryAt
		}
		if now.Before(at) {
			return action{step: stepWait, op: last.Type, at: at}
		}
		return start(last.Type)
	case gardencorev1beta1.LastOperationStateSucceeded:
		if last.Type == gardencorev1beta1.LastOperationTypeDelete {
			return action{step: stepFinalize, op: last.Type}
		}
	}
	return action{step: stepIdle}
}

func start(op gardencorev1beta1.LastOperationType) action {
	return action{step: stepStart, op: op}
}

// followUp is the operation a spec change starts: a shoot that was never
// created successfully is still being created.
func followUp(last *gardencorev1beta1.LastOperation) gardencorev1beta1.LastOperationType {
	if last.Type == gardencorev1beta1.LastOperationTypeCreate && last.State != gardencorev1beta1.LastOperationStateSucceeded {
		return gardencorev1beta1.LastOperationTypeCreate
	}
	return gardencorev1beta1.LastOperationTypeReconcile
}

// retryRequested reports whether a failed operation is to be retried.
func retryRequested(shoot *gardencorev1beta1.Shoot) bool {
	last := shoot.Status.LastOperation
	return last != nil && last.State == gardencorev1beta1.LastOperationStateFailed &&
		shoot.Annotations[v1beta1constants.GardenerOperation] == v1beta1constants.ShootOperationRetry
}

// progressAt is the progress of an operation of the given duration after
// elapsed, capped at limit.
func progressAt(elapsed, duration time.Duration, limit int32) int32 {
	if duration <= 0 {
		return limit
	}
	p := int32(min(int64(elapsed*100/duration), int64(limit)))
	return max(p, 0)
}
