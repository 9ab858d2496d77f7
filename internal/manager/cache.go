package manager

import (
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
)

// ControlPlaneTransform is the transform of the cache of the manager's namespace (Runtimes,
// GardenerClusters, the ACL ConfigMap). No step reads managedFields nor kubectl's copy of the
// last apply, and together they are often as large as the rest of the object.
func ControlPlaneTransform(obj any) (any, error) {
	gardenclient.StripBookkeeping(obj)
	return obj, nil
}
