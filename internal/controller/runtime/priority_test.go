package runtime

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestShootEventsGoAheadOfNewRuntimes fills a priority queue as a burst does: new Runtimes
// first, then the shoot of an earlier one ends its operation. That Runtime is taken first; a
// shoot of the initial list stays behind the new Runtimes, and a plain queue still gets it.
func TestShootEventsGoAheadOfNewRuntimes(t *testing.T) {
	request := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: name}}
	}
	shootOf := func(name, rv string) *gardencorev1beta1.Shoot {
		s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: name, ResourceVersion: rv,
			Labels: map[string]string{LabelRuntimeName: name, LabelRuntimeNamespace: "kcp-system"}}}
		s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeCreate,
			State: gardencorev1beta1.LastOperationStateProcessing}
		if rv != "1" {
			s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateSucceeded
		}
		return s
	}
	h := shootEvents(DefaultShootProgressRefresh, "")

	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	q.Add(request("new-1"))
	q.Add(request("new-2"))
	h.Create(t.Context(), event.TypedCreateEvent[*gardencorev1beta1.Shoot]{Object: shootOf("listed", "1"), IsInInitialList: true}, q)
	h.Update(t.Context(), event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: shootOf("earlier", "1"), ObjectNew: shootOf("earlier", "2")}, q)

	want := []struct {
		name     string
		priority int
	}{{"earlier", PriorityInFlight}, {"new-1", 0}, {"new-2", 0}, {"listed", handler.LowPriority}}
	for _, w := range want {
		item, priority, _ := q.GetWithPriority()
		if item.Name != w.name || priority != w.priority {
			t.Errorf("took %s at priority %d, want %s at %d", item.Name, priority, w.name, w.priority)
		}
		q.Done(item)
	}

	plain := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer plain.ShutDown()
	h.Update(t.Context(), event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: shootOf("earlier", "1"), ObjectNew: shootOf("earlier", "2")}, plain)
	if plain.Len() != 1 {
		t.Errorf("a plain queue holds %d requests after a shoot event, want 1", plain.Len())
	}
}
