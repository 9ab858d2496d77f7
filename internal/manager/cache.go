package manager

import (
	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// ControlPlaneTransform is the transform of the cache of the manager's namespace (Runtimes,
// GardenerClusters, the ACL ConfigMap). No step reads managedFields nor kubectl's copy of the
// last apply, and together they are often as large as the rest of the object. The settings of
// a spec and the conditions' types and reasons repeat across the fleet: each is kept once
// (package intern).
func ControlPlaneTransform(obj any) (any, error) {
	gardenclient.CompactMeta(obj)
	switch o := obj.(type) {
	case *infrav1.Runtime:
		intern.Strings(&o.Spec)
		intern.Conditions(o.Status.Conditions)
	case *infrav1.GardenerCluster:
		intern.Strings(&o.Spec)
		intern.Conditions(o.Status.Conditions)
	}
	return obj, nil
}
