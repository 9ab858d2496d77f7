package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Finalizer is the finalizer Gardener puts on shoots.
const Finalizer = gardencorev1beta1.GardenerName

// Reconciler plays the gardenlet for every shoot of the garden API it is
// given a client for. It owns status.lastOperation and friends, the
// "gardener" finalizer and the removal of the retry annotation; operations
// run in memory, so a restarted Reconciler restarts running operations.
type Reconciler struct {
	client     client.Client
	reader     client.Reader
	clusters   Clusters
	rules      *Rules
	clock      clock.Clock
	duration   time.Duration
	retryDelay time.Duration
	interval   time.Duration
	maxDelay   time.Duration
	retryCycle time.Duration
	id         identity

	mu  sync.Mutex
	ops map[types.UID]*operation
	// errs counts the Errors in a row of each shoot, for the backoff.
	errs map[types.UID]int
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithReader sets where shoots are read from; default the client. An
// uncached reader keeps a pass from acting on a shoot older than its own
// last write.
func WithReader(rd client.Reader) Option { return func(r *Reconciler) { r.reader = rd } }

// WithClusters sets what runs the shoots' API servers; default NopClusters.
func WithClusters(c Clusters) Option { return func(r *Reconciler) { r.clusters = c } }

// WithRules sets the lifecycle rules; default none (everything succeeds).
func WithRules(rs *Rules) Option { return func(r *Reconciler) { r.rules = rs } }

// WithClock sets the clock; default the real one.
func WithClock(c clock.Clock) Option { return func(r *Reconciler) { r.clock = c } }

// WithOperationDuration sets how long an operation takes; default 5s.
func WithOperationDuration(d time.Duration) Option { return func(r *Reconciler) { r.duration = d } }

// WithRetryDelay sets how long an Error waits before it is retried, unless
// its rule says otherwise; default 10s.
func WithRetryDelay(d time.Duration) Option { return func(r *Reconciler) { r.retryDelay = d } }

// WithProgressInterval sets how often a running operation's progress is
// written; default a fifth of the operation duration (at least 100ms, at
// most 10s). Benchmarks with many shoots raise it to spare the garden API.
func WithProgressInterval(d time.Duration) Option { return func(r *Reconciler) { r.interval = d } }

// WithMaxRetryDelay caps the backoff of repeated Errors; default 1000s,
// controller-runtime's cap on gardenlet's requeues.
func WithMaxRetryDelay(d time.Duration) Option { return func(r *Reconciler) { r.maxDelay = d } }

// WithRetryCycle sets how long gardenlet keeps retrying Errors of one
// operation before it gives up with Failed; default 12h, Gardener's
// default retry duration.
func WithRetryCycle(d time.Duration) Option { return func(r *Reconciler) { r.retryCycle = d } }

// NewReconciler returns a Reconciler that reads and writes shoots with c,
// which must talk to the garden API directly (not through fault injection).
func NewReconciler(c client.Client, opts ...Option) *Reconciler {
	r := &Reconciler{
		client:     c,
		clusters:   NopClusters{},
		rules:      NewRules(1),
		clock:      clock.RealClock{},
		duration:   5 * time.Second,
		retryDelay: 10 * time.Second,
		maxDelay:   1000 * time.Second,
		retryCycle: 12 * time.Hour,
		id: identity{
			gardener: gardencorev1beta1.Gardener{ID: "gardensim", Name: "gardensim", Version: "v1.110.0"},
		},
		ops:  map[types.UID]*operation{},
		errs: map[types.UID]int{},
	}
	for _, o := range opts {
		o(r)
	}
	if r.reader == nil {
		r.reader = c
	}
	if r.interval <= 0 {
		r.interval = min(max(r.duration/5, 100*time.Millisecond), 10*time.Second)
	}
	return r
}

// SetupWithManager registers the Reconciler with mgr. Status-only changes
// (the Reconciler's own writes) do not trigger it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("gardenlet").
		For(&gardencorev1beta1.Shoot{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, bound))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up lifecycle controller: %w", err)
	}
	return nil
}

// bound passes the update by which gardener-scheduler binds a shoot to a seed.
var bound = predicate.TypedFuncs[client.Object]{
	CreateFunc: func(event.TypedCreateEvent[client.Object]) bool { return false },
	DeleteFunc: func(event.TypedDeleteEvent[client.Object]) bool { return false },
	UpdateFunc: func(e event.TypedUpdateEvent[client.Object]) bool {
		old, okOld := e.ObjectOld.(*gardencorev1beta1.Shoot)
		shoot, ok := e.ObjectNew.(*gardencorev1beta1.Shoot)
		return okOld && ok && old.Spec.SeedName == nil && shoot.Spec.SeedName != nil
	},
	GenericFunc: func(event.TypedGenericEvent[client.Object]) bool { return false },
}

// Reconcile moves one shoot's operation on.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	shoot := &gardencorev1beta1.Shoot{}
	if err := r.reader.Get(ctx, req.NamespacedName, shoot); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get shoot %s: %w", req, err)
	}
	if shoot.DeletionTimestamp == nil && shoot.Spec.SeedName == nil {
		// gardener-scheduler binds it; the binding triggers the next pass.
		return ctrl.Result{}, nil
	}
	if done, err := r.ensureFinalizer(ctx, shoot); done || err != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now()
	act := plan(shoot, r.op(shoot.UID), now, r.retryDelay)
	switch act.step {
	case stepStart:
		return r.start(ctx, shoot, act.op)
	case stepAdvance:
		return r.advance(ctx, shoot)
	case stepWait:
		return ctrl.Result{RequeueAfter: act.at.Sub(now)}, nil
	case stepFinalize:
		return ctrl.Result{}, r.finalize(ctx, shoot)
	}
	return ctrl.Result{}, nil
}

// ensureFinalizer adds the finalizer to a live shoot; it reports done for a
// deleted shoot that no longer carries it (nothing left to do).
func (r *Reconciler) ensureFinalizer(ctx context.Context, shoot *gardencorev1beta1.Shoot) (bool, error) {
	has := hasFinalizer(shoot)
	if shoot.DeletionTimestamp != nil {
		if !has {
			r.forget(shoot.UID)
		}
		return !has, nil
	}
	if has {
		return false, nil
	}
	patch := client.MergeFromWithOptions(shoot.DeepCopy(), client.MergeFromWithOptimisticLock{})
	shoot.Finalizers = append(shoot.Finalizers, Finalizer)
	if err := r.client.Patch(ctx, shoot, patch); err != nil {
		return false, fmt.Errorf("add finalizer to shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	return false, nil
}

func hasFinalizer(shoot *gardencorev1beta1.Shoot) bool {
	for _, f := range shoot.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

func (r *Reconciler) op(uid types.UID) *operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops[uid]
}

func (r *Reconciler) remember(uid types.UID, op *operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops[uid] = op
}

// countError counts one more Error in a row.
func (r *Reconciler) countError(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[uid]++
}

// errors is the number of Errors in a row.
func (r *Reconciler) errors(uid types.UID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[uid]
}

func (r *Reconciler) resetErrors(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.errs, uid)
}

func (r *Reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ops, uid)
}

// removeRetryAnnotation removes gardener.cloud/operation=retry once acted on.
func (r *Reconciler) removeRetryAnnotation(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	if shoot.Annotations[v1beta1constants.GardenerOperation] != v1beta1constants.ShootOperationRetry {
		return nil
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	delete(shoot.Annotations, v1beta1constants.GardenerOperation)
	if err := r.client.Patch(ctx, shoot, patch); err != nil {
		return fmt.Errorf("remove retry annotation from shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
	}
	return nil
}
