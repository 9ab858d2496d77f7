package gardenclient

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestGardenKindsNeedNoDiscovery maps the kinds the manager uses in the Gardener project with a
// Gardener that does not answer: a failed discovery request at start cannot hold up the shoot
// watch, and with it every Runtime.
func TestGardenKindsNeedNoDiscovery(t *testing.T) {
	mapper, err := RESTMapper(&rest.Config{Host: "https://127.0.0.1:1"}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		gardencorev1beta1.SchemeGroupVersion.WithKind("Shoot"),
		gardencorev1beta1.SchemeGroupVersion.WithKind("Seed"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	} {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s: %v", gvk, err)
			continue
		}
		if wantNamespaced := gvk.Kind != "Seed"; (m.Scope.Name() == meta.RESTScopeNameNamespace) != wantNamespaced {
			t.Errorf("%s: scope %s", gvk, m.Scope.Name())
		}
	}
	if _, err := mapper.RESTMapping(schema.GroupKind{Group: "core.gardener.cloud", Kind: "Project"}, "v1beta1"); err == nil {
		t.Error("a kind outside the static set was mapped without discovery")
	}
}

// TestSeedsAreNeverCached reads Seeds from the API server, and the kinds Options.Uncached
// names too. Shoots and ConfigMaps come from the watched cache unless Uncached names them.
func TestSeedsAreNeverCached(t *testing.T) {
	uncached := func(o Options, obj client.Object) bool {
		return slices.ContainsFunc(o.clientOptions().Cache.DisableFor, func(u client.Object) bool { return reflect.TypeOf(u) == reflect.TypeOf(obj) })
	}
	if o := (Options{}); !uncached(o, &gardencorev1beta1.Seed{}) || uncached(o, &gardencorev1beta1.Shoot{}) || uncached(o, &corev1.ConfigMap{}) {
		t.Error("by default Seeds must be read from the API server, shoots and ConfigMaps from the cache")
	}
	o := Options{Uncached: []client.Object{&gardencorev1beta1.Shoot{}}}
	if !uncached(o, &gardencorev1beta1.Seed{}) || !uncached(o, &gardencorev1beta1.Shoot{}) {
		t.Error("Uncached must add to Seeds")
	}
}
