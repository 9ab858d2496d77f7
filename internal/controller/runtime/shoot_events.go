package runtime

import (
	"context"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultShootProgressRefresh is how long a Runtime may lag behind its shoot's progress reports
// by default (--shoot-progress-refresh). Gardener reports an operation's progress many times
// while it runs; the Runtime mirrors it (status.shootLastOperation), but a pass for each report
// would keep the workers and the control plane busy with writes that decide nothing, ahead of
// new Runtimes whose shoots are not created yet. Upstream's manager polls a shoot under creation
// once a minute.
const DefaultShootProgressRefresh = 30 * time.Second

// shootChange is what a shoot update means to its Runtime.
type shootChange int

const (
	// changeNone touches nothing the controller reads: the shoot's health conditions and
	// constraints, which Gardener's care controller keeps current.
	changeNone shootChange = iota
	// changeProgress is a progress report within one operation: its progress, description or
	// update time.
	changeProgress
	// changeActedOn is anything else: an operation that starts or ends, errors, the spec, the
	// metadata, a deletion.
	changeActedOn
)

// classifyShootUpdate tells what changed from old to new.
func classifyShootUpdate(old, new *gardencorev1beta1.Shoot) shootChange {
	if !equality.Semantic.DeepEqual(actedOn(old), actedOn(new)) {
		return changeActedOn
	}
	if !equality.Semantic.DeepEqual(old.Status.LastOperation, new.Status.LastOperation) {
		return changeProgress
	}
	return changeNone
}

// actedOn returns a copy of shoot without what the controller does not act on: the fields that
// change with every write, the health conditions and constraints, and the progress of the last
// operation (its type and state stay).
func actedOn(shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	c := shoot.DeepCopy()
	c.ResourceVersion = ""
	c.ManagedFields = nil
	c.Status.Conditions = nil
	c.Status.Constraints = nil
	if op := c.Status.LastOperation; op != nil {
		c.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: op.Type, State: op.State}
	}
	return c
}

// shootEvents maps shoot events to the Runtime that owns the shoot, at PriorityInFlight. An
// update the controller acts on enqueues at once; a progress report enqueues refresh later,
// where the queue keeps the earlier time of a request already waiting, so a Runtime takes at
// most one pass per refresh for them; a change to nothing the controller reads
// enqueues nothing. A resync (the same resourceVersion) stays as controller-runtime queues it.
// Shoots of Runtimes outside namespace (another manager's, in the same Gardener project) enqueue
// nothing; an empty namespace serves all.
func shootEvents(refresh time.Duration, namespace string) handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request] {
	h := inFlight(handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, s *gardencorev1beta1.Shoot) []reconcile.Request {
		return inNamespace(namespace, byRuntimeLabels(ctx, s))
	}))
	return handler.TypedFuncs[*gardencorev1beta1.Shoot, reconcile.Request]{
		CreateFunc:  h.Create,
		DeleteFunc:  h.Delete,
		GenericFunc: h.Generic,
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*gardencorev1beta1.Shoot], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld == nil || e.ObjectNew == nil || e.ObjectOld.ResourceVersion == e.ObjectNew.ResourceVersion {
				h.Update(ctx, e, q)
				return
			}
			switch classifyShootUpdate(e.ObjectOld, e.ObjectNew) {
			case changeActedOn:
				h.Update(ctx, e, q)
			case changeProgress:
				h.Update(ctx, e, later(q, refresh))
			case changeNone:
			}
		},
	}
}

// inNamespace returns the requests of reqs in namespace, all of them when namespace is empty.
func inNamespace(namespace string, reqs []reconcile.Request) []reconcile.Request {
	if namespace == "" {
		return reqs
	}
	return slices.DeleteFunc(reqs, func(r reconcile.Request) bool { return r.Namespace != namespace })
}

// later returns q with every add that sets no delay of its own delayed by after.
func later(q workqueue.TypedRateLimitingInterface[reconcile.Request], after time.Duration) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return defaultsQueue{PriorityQueue: pq, after: after}
	}
	return laterQueue{TypedRateLimitingInterface: q, after: after}
}

// laterQueue is later for a queue without priorities.
type laterQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	after time.Duration
}

func (q laterQueue) Add(item reconcile.Request) { q.AddAfter(item, q.after) }
