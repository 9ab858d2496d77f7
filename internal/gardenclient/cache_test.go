package gardenclient_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"
	"unsafe"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
)

// twice decodes two copies of obj apart, as the cache decodes each object it receives, and
// transforms each.
func twice[T any](t *testing.T, obj *T) (*T, *T) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := [2]*T{}
	for i := range out {
		out[i] = new(T)
		if err := json.Unmarshal(data, out[i]); err != nil {
			t.Fatal(err)
		}
		got, err := gardenclient.Transform(out[i])
		if err != nil {
			t.Fatal(err)
		}
		// A shoot is read as a cache read gets it: the Shoot its stored form keeps.
		if shoot, ok := gardenclient.ShootOf(got); ok {
			got = shoot
		}
		out[i] = got.(*T)
	}
	return out[0], out[1]
}

func shared(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }

// TestTransformKeepsRepeatedStringsOnce checks that the garden cache keeps one copy of what a
// fleet's shoots and authentication ConfigMaps repeat.
func TestTransformKeepsRepeatedStringsOnce(t *testing.T) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "c-1", Labels: map[string]string{"kyma-project.io/region": "eu-central-1"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	shoot.Spec.Region = "eu-central-1"
	shoot.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile,
		State: gardencorev1beta1.LastOperationStateSucceeded, Description: "Shoot cluster has been successfully reconciled."}
	a, b := twice(t, shoot)
	if a.ManagedFields != nil {
		t.Error("managedFields are kept")
	}
	for path, pair := range map[string][2]string{
		"label key":                 {keyOf(a.Labels), keyOf(b.Labels)},
		"spec.region":               {a.Spec.Region, b.Spec.Region},
		"lastOperation.description": {a.Status.LastOperation.Description, b.Status.LastOperation.Description},
		"lastOperation.state":       {string(a.Status.LastOperation.State), string(b.Status.LastOperation.State)},
	} {
		if !shared(pair[0], pair[1]) {
			t.Errorf("shoot %s: each copy keeps its own %q", path, pair[0])
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-config-c-1",
		Annotations: map[string]string{"infrastructuremanager.kyma-project.io/oidc-input": "ab06177c8ddf655d"}},
		Data: map[string]string{"config.yaml": "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"}}
	x, y := twice(t, cm)
	if !shared(x.Data["config.yaml"], y.Data["config.yaml"]) {
		t.Error("ConfigMap: each copy keeps its own authentication configuration")
	}
	if !sameMap(x.Data, y.Data) || !sameMap(x.Annotations, y.Annotations) {
		t.Error("ConfigMap: each copy keeps its own map of the data or of the annotations")
	}
	if x.Data["config.yaml"] != cm.Data["config.yaml"] {
		t.Errorf("ConfigMap data changed: %q", x.Data["config.yaml"])
	}
}

// TestTransformWritesNoSharedData: a ConfigMap whose data map the cache already shares with
// others may reach the transform again (client-go asks transforms to be idempotent for objects
// passed to Replace once more). The transform must not write into that map while a reader of
// the cache copies it; the race detector, on in make test, sees such a write.
func TestTransformWritesNoSharedData(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-config-c-2"},
		Data: map[string]string{"config.yaml": "kind: AuthenticationConfiguration\n", "digest": "ab06177c8ddf655d"}}
	x, y := twice(t, cm)
	if !sameMap(x.Data, y.Data) {
		t.Fatal("the two ConfigMaps do not share their data: nothing to test")
	}
	start, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-start
		for range 2000 {
			_ = x.DeepCopy() // what a cache Get does
		}
	}()
	close(start)
	for range 2000 {
		if _, err := gardenclient.Transform(y); err != nil {
			t.Error(err)
		}
	}
	<-done
	if !sameMap(x.Data, y.Data) || !maps.Equal(y.Data, cm.Data) {
		t.Errorf("the data changed on the way through the transform again: %v", y.Data)
	}
}

// sameMap reports whether a and b are one map, not two equal ones.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func keyOf(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}
