package manager

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/randfill"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
)

// randomClusters fills n GardenerClusters with random values in every field, as a check that
// the stored form keeps all of a GardenerCluster.
func randomClusters(n int) []*infrav1.GardenerCluster {
	f := randfill.NewWithSeed(33).NilChance(0.2).NumElements(0, 4).Funcs(
		func(m *map[string]string, c randfill.Continue) {
			*m = map[string]string{}
			for range c.Intn(16) {
				(*m)["kyma-project.io/"+c.String(6)] = c.String(10)
			}
		},
	)
	out := make([]*infrav1.GardenerCluster, n)
	for i := range out {
		out[i] = &infrav1.GardenerCluster{}
		f.Fill(out[i])
	}
	return out
}

// storedOf transforms a copy of gc as the cache of the manager's namespace does.
func storedOf(t *testing.T, gc *infrav1.GardenerCluster) client.Object {
	t.Helper()
	got, err := ControlPlaneTransform(gc.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := got.(client.Object)
	if !ok {
		t.Fatalf("the transform returned a %T, which an informer cannot keep", got)
	}
	if _, plain := obj.(*infrav1.GardenerCluster); plain {
		t.Fatal("the cache keeps GardenerClusters as they are, not in their stored form")
	}
	return obj
}

// TestStoredClusterReadsAsTransformed: what a read through the cache gets (the stored form's
// copy) is the GardenerCluster as the transform's compaction leaves it, field for field, for
// GardenerClusters with every field filled at random. A field the stored form drops fails here.
func TestStoredClusterReadsAsTransformed(t *testing.T) {
	for i, gc := range randomClusters(200) {
		want := gc.DeepCopy()
		gardenclient.CompactMeta(want)
		// The kind is not stored: the cache sets it on each copy it hands out. Labels and
		// annotations without entries read as none, as the API server serves them.
		want.TypeMeta = metav1.TypeMeta{}
		if len(want.Labels) == 0 {
			want.Labels = nil
		}
		if len(want.Annotations) == 0 {
			want.Annotations = nil
		}
		obj := storedOf(t, gc)
		got, ok := obj.DeepCopyObject().(*infrav1.GardenerCluster)
		if !ok {
			t.Fatalf("cluster %d: the copy of the stored form is a %T, not a GardenerCluster", i, obj.DeepCopyObject())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cluster %d: a read gets another GardenerCluster than the transform leaves (-transformed +read):\n%s", i, diff)
		}
		// What the handlers, the predicates and a label selector read of the stored form.
		if !cmp.Equal(obj.GetLabels(), want.Labels) || !cmp.Equal(obj.GetAnnotations(), want.Annotations) {
			t.Fatalf("cluster %d: the stored form's labels or annotations differ", i)
		}
		if obj.GetName() != want.Name || obj.GetNamespace() != want.Namespace || obj.GetGeneration() != want.Generation {
			t.Fatalf("cluster %d: the stored form's name, namespace or generation differ", i)
		}
		s := obj.(*storedCluster)
		for k, v := range want.Labels {
			if s.Label(k) != v {
				t.Fatalf("cluster %d: label %q is %q in the stored form, want %q", i, k, s.Label(k), v)
			}
		}
		if again, _ := ControlPlaneTransform(obj); again != obj {
			t.Fatalf("cluster %d: a stored GardenerCluster passed the transform again and came out as another object", i)
		}
	}
}

// TestStoredClusterCopiesShareNothing: a reader may change the GardenerCluster it read; the
// next read gets it as stored.
func TestStoredClusterCopiesShareNothing(t *testing.T) {
	for i, gc := range randomClusters(50) {
		obj := storedOf(t, gc)
		first := obj.DeepCopyObject().(*infrav1.GardenerCluster)
		want := first.DeepCopy()
		first.Name += "-changed"
		first.Finalizers = append(first.Finalizers[:0:0], "changed")
		first.Labels = map[string]string{"changed": "true"}
		if l := obj.GetLabels(); l != nil {
			l["changed"] = "true" // a reader's map of the labels is its own too
		}
		first.Spec.Shoot.Name = "changed"
		first.Status.State = "changed"
		for j := range first.Status.Conditions {
			first.Status.Conditions[j].Message = "changed"
		}
		if e := first.Status.KubeconfigExpiresAt; e != nil {
			e.Time = e.AddDate(1, 0, 0)
		}
		if s := first.Status.Step; s != nil {
			s.Name = "changed"
		}
		if diff := cmp.Diff(want, obj.DeepCopyObject()); diff != "" {
			t.Fatalf("cluster %d: a change of a read copy reached the cache (-before +after):\n%s", i, diff)
		}
	}
}

// TestStoredClusterEvents: the handlers of the GardenerCluster informer get the stored form.
// The Runtime controller's handler reads its labels, and the GardenerCluster controller's
// predicates its generation, labels and annotations: each sees what the GardenerCluster holds.
func TestStoredClusterEvents(t *testing.T) {
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace, gc.Generation = "rid-1", "kcp-system", 1
	gc.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1", infrav1.LabelRuntimeName: "rt-1", "kyma-project.io/runtime-namespace": "kcp-system"}
	gc.Annotations = map[string]string{infrav1.AnnotationForceKubeconfigRotation: "true"}
	old := storedOf(t, gc)
	h := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[infrav1.LabelRuntimeName]}}}
	})
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Create(context.Background(), event.CreateEvent{Object: old}, q)
	if item, _ := q.Get(); item.Name != "rt-1" || item.Namespace != "kcp-system" {
		t.Errorf("the handler enqueued %v, want the Runtime named by the label (kcp-system/rt-1)", item)
	}
	changed := []func(*infrav1.GardenerCluster){
		func(g *infrav1.GardenerCluster) { g.Generation++ },
		func(g *infrav1.GardenerCluster) { g.Labels["kyma-project.io/runtime-namespace"] = "other" },
		func(g *infrav1.GardenerCluster) { g.Annotations[infrav1.AnnotationForceKubeconfigRotation] = "false" },
	}
	p := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{})
	if p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: storedOf(t, gc)}) {
		t.Error("the predicates pass an update that changed nothing")
	}
	for i, change := range changed {
		next := gc.DeepCopy()
		change(next)
		if !p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: storedOf(t, next)}) {
			t.Errorf("change %d: the predicates drop an update of the generation, a label or an annotation", i)
		}
	}
}
