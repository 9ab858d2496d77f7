package lifecycle

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	create    = gardencorev1beta1.LastOperationTypeCreate
	reconcile = gardencorev1beta1.LastOperationTypeReconcile
	deletion  = gardencorev1beta1.LastOperationTypeDelete

	processing = gardencorev1beta1.LastOperationStateProcessing
	succeeded  = gardencorev1beta1.LastOperationStateSucceeded
	errored    = gardencorev1beta1.LastOperationStateError
	failed     = gardencorev1beta1.LastOperationStateFailed
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// shootWith builds a shoot in generation gen whose last operation is typ in
// state (none if typ is empty), observed at generation observed.
func shootWith(typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState, gen, observed int64) *gardencorev1beta1.Shoot {
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "garden-p", Generation: gen}}
	s.Status.ObservedGeneration = observed
	if typ != "" {
		s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: typ, State: state, LastUpdateTime: metav1.NewTime(now.Add(-time.Second))}
	}
	return s
}

func TestPlan(t *testing.T) {
	deleting := func(s *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
		s.DeletionTimestamp = &metav1.Time{Time: now}
		return s
	}
	retry := func(s *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
		s.Annotations = map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.ShootOperationRetry}
		return s
	}
	running := func(typ gardencorev1beta1.LastOperationType) *operation { return &operation{typ: typ, started: now} }
	tests := []struct {
		name  string                   // case name
		shoot *gardencorev1beta1.Shoot // the shoot as read
		op    *operation               // the operation the controller remembers
		want  action                   // the decision
	}{
		{name: "new shoot is created", shoot: shootWith("", "", 1, 0), want: start(create)},
		{name: "running create advances", shoot: shootWith(create, processing, 1, 1), op: running(create), want: action{step: stepAdvance, op: create}},
		{name: "forgotten create restarts", shoot: shootWith(create, processing, 1, 1), want: start(create)},
		{name: "succeeded shoot idles", shoot: shootWith(create, succeeded, 1, 1), want: action{}},
		{name: "spec change reconciles", shoot: shootWith(create, succeeded, 2, 1), want: start(reconcile)},
		{name: "spec change of a never created shoot creates", shoot: shootWith(create, failed, 2, 1), want: start(create)},
		{name: "failed shoot idles", shoot: shootWith(reconcile, failed, 1, 1), want: action{}},
		{name: "retry annotation restarts a failed operation", shoot: retry(shootWith(reconcile, failed, 1, 1)), want: start(reconcile)},
		{name: "retry annotation is ignored while processing", shoot: retry(shootWith(create, processing, 1, 1)), op: running(create), want: action{step: stepAdvance, op: create}},
		{
			name: "error waits for its retry", shoot: shootWith(create, errored, 1, 1),
			want: action{step: stepWait, op: create, at: now.Add(9 * time.Second)},
		},
		{
			name: "error retries when due", shoot: shootWith(create, errored, 1, 1),
			op: &operation{typ: create, retryAt: now}, want: start(create),
		},
		{name: "deletion starts a delete", shoot: deleting(shootWith(create, succeeded, 2, 1)), want: start(deletion)},
		{name: "deletion interrupts a hanging create", shoot: deleting(shootWith(create, processing, 2, 1)), op: running(create), want: start(deletion)},
		{name: "running delete advances", shoot: deleting(shootWith(deletion, processing, 2, 2)), op: running(deletion), want: action{step: stepAdvance, op: deletion}},
		{name: "succeeded delete finalizes", shoot: deleting(shootWith(deletion, succeeded, 2, 2)), want: action{step: stepFinalize, op: deletion}},
		{name: "failed delete waits for retry", shoot: deleting(shootWith(deletion, failed, 2, 2)), want: action{}},
		{name: "failed delete retried", shoot: retry(deleting(shootWith(deletion, failed, 2, 2))), want: start(deletion)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := plan(tc.shoot, tc.op, now, 10*time.Second); got != tc.want {
				t.Errorf("plan = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestProgressAt(t *testing.T) {
	tests := []struct {
		name     string        // case name
		elapsed  time.Duration // time since the operation began
		duration time.Duration // length of the operation
		limit    int32         // cap
		want     int32         // progress
	}{
		{name: "start", elapsed: 0, duration: 10 * time.Second, limit: 99, want: 0},
		{name: "halfway", elapsed: 5 * time.Second, duration: 10 * time.Second, limit: 99, want: 50},
		{name: "capped", elapsed: time.Minute, duration: 10 * time.Second, limit: 99, want: 99},
		{name: "zero duration", elapsed: 0, duration: 0, limit: 100, want: 100},
		{name: "clock went back", elapsed: -time.Second, duration: 10 * time.Second, limit: 99, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := progressAt(tc.elapsed, tc.duration, tc.limit); got != tc.want {
				t.Errorf("progressAt = %d, want %d", got, tc.want)
			}
		})
	}
}
