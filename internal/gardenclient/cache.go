package gardenclient

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// lastApplied is the annotation where kubectl apply keeps a whole copy of what it applied.
const lastApplied = corev1.LastAppliedConfigAnnotation

// Transform is the transform of the cache of the Gardener project (shoots and their
// structured-auth ConfigMaps). A shoot keeps what the steps and the shoot watch read
// (gardener.TrimShoot), in its stored form (storedShoot): a read through the cache gets a
// Shoot, an event handler of the shoot informer converts it (ShootEvents). A ConfigMap's data
// is kept once for all that hold the same.
func Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *gardencorev1beta1.Shoot:
		// Trimmed first, so that the metadata's strings are shared only for what is kept.
		CompactMeta(gardener.TrimShoot(o))
		return storeShoot(o), nil
	case *storedShoot:
		// Transformed already: client-go may pass an object to the transform again.
		return o, nil
	}
	CompactMeta(obj)
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		// Runtimes that take the landscape's default OIDC provider have the same
		// authentication configuration, and the same digest of it in an annotation: their
		// ConfigMaps share one copy of each. Nothing here writes into the data map: it may
		// be one that cached ConfigMaps share already, should an object reach the transform
		// twice, and readers copy it while they hold no lock of the transform's (the race
		// detector caught the write of the keys that intern.Strings did here).
		o.Data = intern.Map(o.Data)
		o.Annotations = intern.Map(o.Annotations)
	}
	return obj, nil
}

// CompactMeta drops an object's managedFields and kubectl's last-applied annotation. No step
// reads either, and together they are often as large as the rest of the object. The label and
// annotation keys that are left are shared with the other objects (package intern).
func CompactMeta(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		m.SetAnnotations(a)
	}
	intern.Meta(m)
}
