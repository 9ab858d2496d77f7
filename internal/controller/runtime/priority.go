package runtime

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// PriorityInFlight is the queue priority of a Runtime whose shoot or GardenerCluster changed:
// Gardener finished an operation, a kubeconfig arrived. Such a Runtime is ahead of a new or
// changed Runtime (priority 0), so a burst of new Runtimes does not hold back the ones it already
// started: they move to Ready while the new ones' shoots are created, instead of after all of
// them. Requeues keep the priority the Runtime was taken with; the initial list and resyncs stay
// low (handler.LowPriority), as controller-runtime sets them.
const PriorityInFlight = 10

// inFlight enqueues what h maps an event to at PriorityInFlight, when the controller's queue is
// a priority queue; priorities h sets itself (the initial list's) stay as they are.
func inFlight[O client.Object](h handler.TypedEventHandler[O, reconcile.Request]) handler.TypedEventHandler[O, reconcile.Request] {
	return handler.TypedFuncs[O, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[O], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, e, raised(q))
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[O], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, e, raised(q))
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[O], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, e, raised(q))
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[O], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Generic(ctx, e, raised(q))
		},
	}
}

// raised returns q with PriorityInFlight as the priority of what is added without one.
func raised(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return q
	}
	p := PriorityInFlight
	return defaultsQueue{PriorityQueue: pq, priority: &p}
}

// defaultsQueue adds with its priority and delay wherever an add sets none of its own.
type defaultsQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority *int
	after    time.Duration
}

func (q defaultsQueue) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q defaultsQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (q defaultsQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (q defaultsQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = q.priority
	}
	if o.After == 0 {
		o.After = q.after
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}
