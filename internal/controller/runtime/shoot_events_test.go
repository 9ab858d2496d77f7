package runtime

import (
	"fmt"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestProgressReportsWaitTheirTurn sends a shoot's updates through the handler into a real
// priority queue. Progress reports of one operation wait the refresh (here an hour, so
// they are still waiting when the test looks) and do not stack up; the operation's end makes the
// Runtime ready at once, taken once; changes to the shoot's health conditions enqueue nothing.
func TestProgressReportsWaitTheirTurn(t *testing.T) {
	shoot := func(rv string, progress int32, state gardencorev1beta1.LastOperationState) *gardencorev1beta1.Shoot {
		s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: "s1", ResourceVersion: rv,
			Labels: map[string]string{LabelRuntimeName: "rt-1", LabelRuntimeNamespace: "kcp-system"}}}
		s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeCreate,
			State: state, Progress: progress, Description: fmt.Sprintf("%d%% done", progress)}
		return s
	}
	update := func(h handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request], old, new *gardencorev1beta1.Shoot) {
		h.Update(t.Context(), event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: old, ObjectNew: new}, q)
	}
	h := shootEvents(time.Hour, "kcp-system")
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()

	healthy := shoot("4", 40, gardencorev1beta1.LastOperationStateProcessing)
	healthy.Status.Conditions = []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootAPIServerAvailable, Status: gardencorev1beta1.ConditionTrue}}
	update(h, q, shoot("3", 40, gardencorev1beta1.LastOperationStateProcessing), healthy)
	if n := q.Len(); n != 0 {
		t.Fatalf("a change of the shoot's conditions alone left %d requests ready, want 0", n)
	}

	update(h, q, shoot("1", 10, gardencorev1beta1.LastOperationStateProcessing), shoot("2", 20, gardencorev1beta1.LastOperationStateProcessing))
	update(h, q, shoot("2", 20, gardencorev1beta1.LastOperationStateProcessing), shoot("3", 30, gardencorev1beta1.LastOperationStateProcessing))
	if n := q.Len(); n != 0 {
		t.Fatalf("progress reports left %d requests ready, want them waiting", n)
	}
	update(h, q, shoot("5", 90, gardencorev1beta1.LastOperationStateProcessing), shoot("6", 100, gardencorev1beta1.LastOperationStateSucceeded))
	if n := q.Len(); n != 1 {
		t.Fatalf("the operation's end left %d requests ready, want 1", n)
	}
	item, priority, _ := q.GetWithPriority()
	if item.Name != "rt-1" || priority != PriorityInFlight {
		t.Errorf("took %s at priority %d, want rt-1 at %d", item.Name, priority, PriorityInFlight)
	}
	q.Done(item)
	if n := q.Len(); n != 0 {
		t.Errorf("%d requests ready after the Runtime was taken, want 0: the progress reports were folded into it", n)
	}
}

// TestShootsOfOtherNamespacesAreIgnored: the shoot of a Runtime in a namespace the manager does
// not serve (another manager's, in the same Gardener project) enqueues nothing, so no reconcile
// fails on a Runtime the cache cannot hold.
func TestShootsOfOtherNamespacesAreIgnored(t *testing.T) {
	shoot := func(ns string) *gardencorev1beta1.Shoot {
		return &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-kyma", Name: "s-" + ns,
			Labels: map[string]string{LabelRuntimeName: "rt-1", LabelRuntimeNamespace: ns}}}
	}
	h := shootEvents(time.Hour, "kcp-system")
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()

	h.Create(t.Context(), event.TypedCreateEvent[*gardencorev1beta1.Shoot]{Object: shoot("other-kcp")}, q)
	h.Delete(t.Context(), event.TypedDeleteEvent[*gardencorev1beta1.Shoot]{Object: shoot("other-kcp")}, q)
	if n := q.Len(); n != 0 {
		t.Fatalf("shoots of another namespace left %d requests, want 0", n)
	}
	h.Delete(t.Context(), event.TypedDeleteEvent[*gardencorev1beta1.Shoot]{Object: shoot("kcp-system")}, q)
	if n := q.Len(); n != 1 {
		t.Errorf("the shoot of a served Runtime left %d requests, want 1", n)
	}
}

// TestShootChanges classifies shoot updates: what the controller acts on, a progress report, and
// what it does not read.
func TestShootChanges(t *testing.T) {
	base := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "s1", ResourceVersion: "1", Generation: 1}}
	base.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile,
		State: gardencorev1beta1.LastOperationStateProcessing, Progress: 10}
	cases := []struct {
		name   string
		change func(*gardencorev1beta1.Shoot)
		want   shootChange
	}{
		{"resourceVersion only", func(s *gardencorev1beta1.Shoot) { s.ResourceVersion = "2" }, changeNone},
		{"conditions", func(s *gardencorev1beta1.Shoot) {
			s.Status.Conditions = []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootEveryNodeReady, Status: gardencorev1beta1.ConditionFalse}}
		}, changeNone},
		{"progress", func(s *gardencorev1beta1.Shoot) { s.Status.LastOperation.Progress = 40 }, changeProgress},
		{"description", func(s *gardencorev1beta1.Shoot) { s.Status.LastOperation.Description = "Waiting for workers" }, changeProgress},
		{"state", func(s *gardencorev1beta1.Shoot) {
			s.Status.LastOperation.State = gardencorev1beta1.LastOperationStateError
		}, changeActedOn},
		{"type", func(s *gardencorev1beta1.Shoot) {
			s.Status.LastOperation.Type = gardencorev1beta1.LastOperationTypeDelete
		}, changeActedOn},
		{"errors", func(s *gardencorev1beta1.Shoot) {
			s.Status.LastErrors = []gardencorev1beta1.LastError{{Description: "quota exceeded"}}
		}, changeActedOn},
		{"observed generation", func(s *gardencorev1beta1.Shoot) { s.Status.ObservedGeneration = 1 }, changeActedOn},
		{"spec", func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.33.2" }, changeActedOn},
		{"annotations", func(s *gardencorev1beta1.Shoot) {
			s.Annotations = map[string]string{"gardener.cloud/operation": "retry"}
		}, changeActedOn},
		{"deletion", func(s *gardencorev1beta1.Shoot) { s.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, changeActedOn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			new := base.DeepCopy()
			c.change(new)
			if got := classifyShootUpdate(base, new); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}
