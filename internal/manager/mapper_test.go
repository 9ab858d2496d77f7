package manager

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// TestControlPlaneKindsNeedNoDiscovery: the kinds the manager keeps in its namespace, and their
// lists, whose kind the cache looks up on every List, are mapped with an API server that does
// not answer, so by the static mapper alone.
func TestControlPlaneKindsNeedNoDiscovery(t *testing.T) {
	mapper, err := controlPlaneRESTMapper(&rest.Config{Host: "https://127.0.0.1:1"}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []runtime.Object{
		&infrav1.Runtime{}, &infrav1.RuntimeList{}, &infrav1.GardenerCluster{}, &infrav1.GardenerClusterList{},
		&corev1.Secret{}, &corev1.SecretList{}, &corev1.ConfigMap{}, &corev1.ConfigMapList{},
	} {
		if namespaced, err := apiutil.IsObjectNamespaced(obj, scheme, mapper); err != nil || !namespaced {
			t.Errorf("%T: namespaced %t, %v; want namespaced, without discovery", obj, namespaced, err)
		}
	}
}
