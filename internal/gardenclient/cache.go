package gardenclient

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
)

// lastApplied is the annotation where kubectl apply keeps a whole copy of what it applied.
const lastApplied = corev1.LastAppliedConfigAnnotation

// Transform is the transform of the cache of the Gardener project (shoots and their
// structured-auth ConfigMaps). A shoot keeps what the steps and the shoot watch read
// (runtimectrl.TrimShoot).
func Transform(obj any) (any, error) {
	StripBookkeeping(obj)
	if shoot, ok := obj.(*gardencorev1beta1.Shoot); ok {
		return runtimectrl.TrimShoot(shoot)
	}
	return obj, nil
}

// StripBookkeeping drops an object's managedFields and kubectl's last-applied annotation. No
// step reads either, and together they are often as large as the rest of the object.
func StripBookkeeping(obj any) {
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
