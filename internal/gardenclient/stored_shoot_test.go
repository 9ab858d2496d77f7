package gardenclient_test

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/randfill"

	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// randomShoots fills n shoots with random values in every field, Gardener's own labels and
// annotations among theirs, as a check that the stored form keeps whatever the trim keeps.
func randomShoots(t *testing.T, n int) []*gardencorev1beta1.Shoot {
	t.Helper()
	f := randfill.NewWithSeed(33).NilChance(0.2).NumElements(0, 4).Funcs(
		func(r *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				r.Raw = []byte(`{"kind":"` + c.String(8) + `"}`)
			}
		},
		func(q *resource.Quantity, _ randfill.Continue) { *q = resource.MustParse("20Gi") },
		func(m *map[string]string, c randfill.Continue) {
			*m = map[string]string{}
			for range c.Intn(20) {
				(*m)["example.com/"+c.String(6)] = c.String(10)
			}
			if c.Bool() {
				(*m)["shoot.gardener.cloud/tasks"] = "deployInfrastructure"
				(*m)["name.seed.gardener.cloud/aws-eu1"] = "true"
			}
		},
	)
	out := make([]*gardencorev1beta1.Shoot, n)
	for i := range out {
		out[i] = &gardencorev1beta1.Shoot{}
		f.Fill(out[i])
	}
	return out
}

// stored transforms a copy of shoot as the garden cache does, and returns the stored form.
func stored(t *testing.T, shoot *gardencorev1beta1.Shoot) client.Object {
	t.Helper()
	got, err := gardenclient.Transform(shoot.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := got.(client.Object)
	if !ok {
		t.Fatalf("the transform returned a %T, which an informer cannot keep", got)
	}
	return obj
}

// TestStoredShootReadsAsTrimmed: what a read through the cache gets (the stored form's copy) is
// the shoot as the trim leaves it, field for field, for shoots with every field filled at
// random. A field the trim keeps and the stored form drops fails here.
func TestStoredShootReadsAsTrimmed(t *testing.T) {
	for i, shoot := range randomShoots(t, 200) {
		want := shoot.DeepCopy()
		gardenclient.CompactMeta(gardener.TrimShoot(want))
		// The kind is not stored: the cache sets it on each copy it hands out.
		want.TypeMeta = metav1.TypeMeta{}
		obj := stored(t, shoot)
		if _, isShoot := obj.(*gardencorev1beta1.Shoot); isShoot {
			t.Fatal("the cache keeps shoots as they are, not in their stored form")
		}
		got, ok := obj.DeepCopyObject().(*gardencorev1beta1.Shoot)
		if !ok {
			t.Fatalf("shoot %d: the copy of the stored form is a %T, not a Shoot", i, obj.DeepCopyObject())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("shoot %d: a read gets another shoot than the trim leaves (-trimmed +read):\n%s", i, diff)
		}
		viaShootOf, _ := gardenclient.ShootOf(obj)
		if diff := cmp.Diff(want, viaShootOf); diff != "" {
			t.Fatalf("shoot %d: ShootOf differs from the trim (-trimmed +ShootOf):\n%s", i, diff)
		}
		// What the informer and a label selector read of the stored form.
		if !cmp.Equal(obj.GetLabels(), want.Labels) || !cmp.Equal(obj.GetAnnotations(), want.Annotations) {
			t.Fatalf("shoot %d: the stored form's labels or annotations differ from the trimmed shoot's", i)
		}
		if obj.GetName() != want.Name || obj.GetNamespace() != want.Namespace || obj.GetResourceVersion() != want.ResourceVersion {
			t.Fatalf("shoot %d: the stored form's name, namespace or resourceVersion differ", i)
		}
	}
}

// TestStoredShootCopiesShareNothing: a reader may change the shoot it read; the next read gets
// the shoot as stored.
func TestStoredShootCopiesShareNothing(t *testing.T) {
	for i, shoot := range randomShoots(t, 50) {
		obj := stored(t, shoot)
		first := obj.DeepCopyObject().(*gardencorev1beta1.Shoot)
		want := first.DeepCopy()
		scribble(first)
		if diff := cmp.Diff(want, obj.DeepCopyObject()); diff != "" {
			t.Fatalf("shoot %d: a change of a read copy reached the cache (-before +after):\n%s", i, diff)
		}
	}
}

// scribble changes every part of shoot a step could change in place.
func scribble(shoot *gardencorev1beta1.Shoot) {
	shoot.Name += "-changed"
	shoot.Finalizers = append(shoot.Finalizers[:0:0], "changed")
	if shoot.Labels == nil {
		shoot.Labels = map[string]string{}
	}
	shoot.Labels["changed"] = "true"
	if shoot.Annotations == nil {
		shoot.Annotations = map[string]string{}
	}
	shoot.Annotations["changed"] = "true"
	for k := range shoot.Labels {
		shoot.Labels[k] = "changed"
	}
	if p := shoot.Spec.SeedName; p != nil {
		*p = "changed"
	}
	if ic := shoot.Spec.Provider.InfrastructureConfig; ic != nil && len(ic.Raw) > 0 {
		ic.Raw[0] = 'X'
	}
	if n := shoot.Spec.Networking; n != nil && len(n.IPFamilies) > 0 {
		n.IPFamilies[0] = "changed"
	}
	if d := shoot.Spec.DNS; d != nil && d.Domain != nil {
		*d.Domain = "changed"
	}
	if op := shoot.Status.LastOperation; op != nil {
		op.Description = "changed"
	}
	for i := range shoot.Status.LastErrors {
		shoot.Status.LastErrors[i].Description = "changed"
		if len(shoot.Status.LastErrors[i].Codes) > 0 {
			shoot.Status.LastErrors[i].Codes[0] = "changed"
		}
	}
	for i := range shoot.Status.AdvertisedAddresses {
		shoot.Status.AdvertisedAddresses[i].URL = "changed"
		if a := shoot.Status.AdvertisedAddresses[i].Application; a != nil {
			*a = "changed"
		}
	}
}

// TestTransformTwice: client-go may pass an object to the transform again; a stored shoot comes
// out as it went in.
func TestTransformTwice(t *testing.T) {
	shoot := randomShoots(t, 1)[0]
	obj := stored(t, shoot)
	again, err := gardenclient.Transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	if again != obj {
		t.Fatalf("a stored shoot came out of the transform as %T", again)
	}
}

// TestShootEventsConvert: the handler of shoot events gets Shoots from the informer's stored
// form, old and new alike, and no event of anything else.
func TestShootEventsConvert(t *testing.T) {
	shoots := randomShoots(t, 2)
	old, updated := stored(t, shoots[0]), stored(t, shoots[1])
	var got []string
	h := handler.TypedFuncs[*gardencorev1beta1.Shoot, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*gardencorev1beta1.Shoot], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			got = append(got, "create "+e.Object.Name+labelsOf(e.Object))
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*gardencorev1beta1.Shoot], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			got = append(got, "update "+e.ObjectOld.Name+" to "+e.ObjectNew.Name+labelsOf(e.ObjectNew))
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*gardencorev1beta1.Shoot], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			got = append(got, "delete "+e.Object.Name+labelsOf(e.Object))
		},
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*gardencorev1beta1.Shoot], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			got = append(got, "generic "+e.Object.Name+labelsOf(e.Object))
		},
	}
	events := gardenclient.ShootEvents(h)
	ctx := context.Background()
	events.Create(ctx, event.TypedCreateEvent[client.Object]{Object: old}, nil)
	events.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: old, ObjectNew: updated}, nil)
	events.Delete(ctx, event.TypedDeleteEvent[client.Object]{Object: updated}, nil)
	events.Generic(ctx, event.TypedGenericEvent[client.Object]{Object: updated}, nil)
	events.Create(ctx, event.TypedCreateEvent[client.Object]{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-a-shoot"}}}, nil)
	oldShoot, _ := gardenclient.ShootOf(old)
	newShoot, _ := gardenclient.ShootOf(updated)
	want := []string{
		"create " + oldShoot.Name + labelsOf(oldShoot),
		"update " + oldShoot.Name + " to " + newShoot.Name + labelsOf(newShoot),
		"delete " + newShoot.Name + labelsOf(newShoot),
		"generic " + newShoot.Name + labelsOf(newShoot),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// labelsOf is a shoot's label count, as a check that events carry the labels the stored form
// keeps apart from its metadata.
func labelsOf(s *gardencorev1beta1.Shoot) string {
	return " (" + string(rune('0'+len(s.Labels))) + " labels)"
}
