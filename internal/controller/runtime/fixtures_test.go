package runtime

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
)

// Helpers the step tests share, on top of the world of world_test.go.

// checkWrites fails the test unless the writes to store since the last reset are want, in order.
func checkWrites(t *testing.T, w *world, store string, want ...string) {
	t.Helper()
	if got := w.writes(store); !slices.Equal(got, want) {
		t.Errorf("%s writes %q, want %q", store, got, want)
	}
}

// called reports whether a call of verb on kind reached store since the last reset.
func (w *world) called(store, verb, kind string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.calls, store+" "+verb+" "+kind)
}

// heal removes the faults, so a test can read back what the stores hold.
func (w *world) heal() { w.mu.Lock(); w.faults = nil; w.mu.Unlock() }

// unavailable is the error of a store that cannot answer: transient, ServiceUnavailable.
func unavailable() error {
	return apierrors.NewServiceUnavailable("the store is down")
}

// noKindMatch is the error a cluster answers for a kind it does not serve.
func noKindMatch(gvk schema.GroupVersionKind) error {
	return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

// kubeconfigSecret returns the kubeconfig Secret of rt's runtime id as the GardenerCluster
// controller keeps it for the GardenerCluster of Runtime holder (gardenercluster.OwnsSecret),
// holding kubeconfig under KubeconfigKey unless it is empty.
func kubeconfigSecret(rt *infrav1.Runtime, holder, kubeconfig string) *corev1.Secret {
	s := &corev1.Secret{}
	s.Name, s.Namespace = kubeconfigSecretName(rt), rt.Namespace
	s.Labels = map[string]string{
		infrav1.LabelKymaManagedBy: gardenercluster.ManagedBy,
		infrav1.LabelClusterName:   gardenerClusterName(rt),
		LabelRuntimeName:           holder,
	}
	s.Annotations = map[string]string{gardenercluster.AnnotationShoot: rt.Spec.Shoot.Name}
	if kubeconfig != "" {
		s.Data = map[string][]byte{KubeconfigKey: []byte(kubeconfig)}
	}
	return s
}

// reachable returns the kubeconfig Secret that takes rt to w.runtime.
func reachable(rt *infrav1.Runtime) *corev1.Secret {
	return kubeconfigSecret(rt, rt.Name, runtimeKubeconfig)
}

// conditionTrue reports whether rt has the condition typ with status True.
func conditionTrue(rt *infrav1.Runtime, typ string) bool {
	return meta.IsStatusConditionTrue(rt.Status.Conditions, typ)
}
