package manager

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
)

// lastApplied is the annotation where kubectl apply keeps a whole copy of what it applied.
const lastApplied = corev1.LastAppliedConfigAnnotation

// ControlPlaneTransform is the transform of the cache of the manager's namespace (Runtimes,
// GardenerClusters, the ACL ConfigMap). No step reads managedFields nor kubectl's copy of the
// last apply, and together they are often as large as the rest of the object.
func ControlPlaneTransform(obj any) (any, error) {
	stripBookkeeping(obj)
	return obj, nil
}

// GardenTransform is the transform of the cache of the Gardener project (shoots and their
// structured-auth ConfigMaps). A shoot keeps what the steps and the shoot watch read
// (runtimectrl.TrimShoot).
func GardenTransform(obj any) (any, error) {
	stripBookkeeping(obj)
	if shoot, ok := obj.(*gardencorev1beta1.Shoot); ok {
		return runtimectrl.TrimShoot(shoot)
	}
	return obj, nil
}

// stripBookkeeping drops an object's managedFields and kubectl's last-applied annotation.
func stripBookkeeping(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		m.SetAnnotations(a)
	}
}
