package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// clusterPoll is how often a finished operation checks whether its cluster
// is up yet.
const clusterPoll = 200 * time.Millisecond

// start begins a new operation of type typ.
func (r *Reconciler) start(ctx context.Context, shoot *gardencorev1beta1.Shoot, typ gardencorev1beta1.LastOperationType) (ctrl.Result, error) {
	retry := retryRequested(shoot)
	v := r.rules.Decide(shoot.Namespace, shoot.Name, typ)
	now := r.clock.Now()
	log.FromContext(ctx).Info("Operation started", "operation", typ, "outcome", v.Outcome, "rule", v.Rule)
	patch := client.MergeFrom(shoot.DeepCopy())
	startOperation(shoot, typ, metav1.NewTime(now), r.id)
	if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("start %s of shoot %s/%s: %w", typ, shoot.Namespace, shoot.Name, err)
	}
	r.remember(shoot.UID, &operation{typ: typ, started: now, verdict: v})
	if retry {
		if err := r.removeRetryAnnotation(ctx, shoot); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: r.interval}, nil
}

// advance moves the running operation on, and ends it when it is due.
func (r *Reconciler) advance(ctx context.Context, shoot *gardencorev1beta1.Shoot) (ctrl.Result, error) {
	op := r.op(shoot.UID)
	now := r.clock.Now()
	elapsed := now.Sub(op.started)
	if op.verdict.Outcome != OutcomeSucceeded {
		if progressAt(elapsed, r.duration, 100) >= op.verdict.Progress {
			return r.conclude(ctx, shoot, op)
		}
		return r.progress(ctx, shoot, progressAt(elapsed, r.duration, 99), "")
	}
	if op.typ == gardencorev1beta1.LastOperationTypeDelete {
		if elapsed >= r.duration {
			return r.completeDeletion(ctx, shoot)
		}
		return r.progress(ctx, shoot, progressAt(elapsed, r.duration, 99), "")
	}
	address, ready, err := r.clusters.Ensure(ctx, shoot)
	if err != nil {
		op.verdict = Verdict{Outcome: OutcomeError, Message: fmt.Sprintf("kube-apiserver did not start: %v", err)}
		return r.conclude(ctx, shoot, op)
	}
	if ready && elapsed >= r.duration {
		return r.succeed(ctx, shoot, address)
	}
	return r.progress(ctx, shoot, progressAt(elapsed, r.duration, 99), address)
}

// progress records the progress and, once the cluster is up, its address.
func (r *Reconciler) progress(ctx context.Context, shoot *gardencorev1beta1.Shoot, p int32, address string) (ctrl.Result, error) {
	next := ctrl.Result{RequeueAfter: r.interval}
	if p == 99 {
		next.RequeueAfter = clusterPoll
	}
	advertised := len(shoot.Status.AdvertisedAddresses) > 0 && shoot.Status.AdvertisedAddresses[0].URL == address
	if shoot.Status.LastOperation.Progress == p && (address == "" || advertised) {
		return next, nil
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	progressOperation(shoot, p, metav1.NewTime(r.clock.Now()))
	if address != "" {
		setAddresses(shoot, address)
	}
	if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("record progress of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	return next, nil
}

// succeed ends a Create or Reconcile successfully.
func (r *Reconciler) succeed(ctx context.Context, shoot *gardencorev1beta1.Shoot, address string) (ctrl.Result, error) {
	patch := client.MergeFrom(shoot.DeepCopy())
	setAddresses(shoot, address)
	succeedOperation(shoot, metav1.NewTime(r.clock.Now()))
	if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("complete operation of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	r.forget(shoot.UID)
	r.resetErrors(shoot.UID)
	log.FromContext(ctx).Info("Operation succeeded", "operation", shoot.Status.LastOperation.Type)
	return ctrl.Result{}, nil
}

// completeDeletion stops the shoot's cluster and lets the shoot go.
func (r *Reconciler) completeDeletion(ctx context.Context, shoot *gardencorev1beta1.Shoot) (ctrl.Result, error) {
	if err := r.clusters.Remove(ctx, shoot); err != nil {
		return ctrl.Result{}, fmt.Errorf("stop cluster of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	succeedOperation(shoot, metav1.NewTime(r.clock.Now()))
	if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("complete deletion of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	return ctrl.Result{}, r.finalize(ctx, shoot)
}

// finalize removes the finalizer of a deleted shoot, so that it disappears.
func (r *Reconciler) finalize(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	patch := client.MergeFromWithOptions(shoot.DeepCopy(), client.MergeFromWithOptimisticLock{})
	kept := shoot.Finalizers[:0:0]
	for _, f := range shoot.Finalizers {
		if f != Finalizer {
			kept = append(kept, f)
		}
	}
	shoot.Finalizers = kept
	if err := r.client.Patch(ctx, shoot, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer from shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	r.forget(shoot.UID)
	r.resetErrors(shoot.UID)
	log.FromContext(ctx).Info("Shoot deleted")
	return nil
}

// conclude ends an operation as its verdict says: Error, Failed or Hang.
func (r *Reconciler) conclude(ctx context.Context, shoot *gardencorev1beta1.Shoot, op *operation) (ctrl.Result, error) {
	now := r.clock.Now()
	patch := client.MergeFrom(shoot.DeepCopy())
	progressOperation(shoot, min(op.verdict.Progress, progressAt(now.Sub(op.started), r.duration, 99)), metav1.NewTime(now))
	if op.verdict.Outcome == OutcomeHang {
		if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("stall operation of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
		}
		return ctrl.Result{}, nil
	}
	op.verdict = willRetry(shoot, op.verdict, now, r.retryCycle)
	failOperation(shoot, op.verdict, metav1.NewTime(now))
	if op.verdict.Outcome == OutcomeError {
		r.countError(shoot.UID)
	}
	if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("fail operation of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	log.FromContext(ctx).Info("Operation ended", "state", shoot.Status.LastOperation.State, "codes", op.verdict.Codes)
	if op.verdict.Outcome == OutcomeFailed {
		r.forget(shoot.UID)
		return ctrl.Result{}, nil
	}
	delay := retryBackoff(op.verdict.RetryAfter, r.retryDelay, r.maxDelay, r.errors(shoot.UID))
	op.retryAt = now.Add(delay)
	return ctrl.Result{RequeueAfter: delay}, nil
}

// willRetry turns an Error into Failed where gardenlet gives up: an error
// code no retry can fix (Gardener's non-retryable codes), or a retry cycle
// that has lasted longer than cycle.
func willRetry(shoot *gardencorev1beta1.Shoot, v Verdict, now time.Time, cycle time.Duration) Verdict {
	if v.Outcome != OutcomeError {
		return v
	}
	start := shoot.Status.RetryCycleStartTime
	if hasNonRetryableCode(v.Codes) || (start != nil && cycle > 0 && now.Sub(start.Time) > cycle) {
		v.Outcome = OutcomeFailed
	}
	return v
}

// nonRetryableCodes are the error codes with which gardenlet does not
// retry (HasNonRetryableErrorCode).
var nonRetryableCodes = []gardencorev1beta1.ErrorCode{
	gardencorev1beta1.ErrorInfraUnauthenticated,
	gardencorev1beta1.ErrorInfraUnauthorized,
	gardencorev1beta1.ErrorInfraDependencies,
	gardencorev1beta1.ErrorInfraQuotaExceeded,
	gardencorev1beta1.ErrorInfraRateLimitsExceeded,
	gardencorev1beta1.ErrorConfigurationProblem,
	gardencorev1beta1.ErrorProblematicWebhook,
}

func hasNonRetryableCode(codes []gardencorev1beta1.ErrorCode) bool {
	for _, c := range codes {
		if slices.Contains(nonRetryableCodes, c) {
			return true
		}
	}
	return false
}

// retryBackoff is the wait before the n-th consecutive Error (n >= 1) is
// retried: a rule's explicit wait, else base doubled per earlier Error in
// a row and capped at limit, as a requeue with controller-runtime's
// exponential backoff grows.
func retryBackoff(explicit, base, limit time.Duration, n int) time.Duration {
	if explicit > 0 {
		return explicit
	}
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, max(limit, base))
}
