package manager

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// ControlPlaneTransform is the transform of the cache of the manager's namespace (Runtimes,
// GardenerClusters, the ACL ConfigMap). No step reads managedFields nor kubectl's copy of the
// last apply, and together they are often as large as the rest of the object. The settings of
// a spec, the conditions' types and reasons and the messages that name no runtime repeat across
// the fleet: each is kept once (package intern).
//
// Runtimes and GardenerClusters are kept in stored forms of their own (runtimectrl.StoredRuntime,
// storedCluster): a read through the cache gets a Runtime or a GardenerCluster, an event
// handler of their informers the stored form.
func ControlPlaneTransform(obj any) (any, error) {
	switch obj.(type) {
	case *runtimectrl.StoredRuntime, *storedCluster:
		// Transformed already: client-go may pass an object to the transform again.
		return obj, nil
	}
	gardenclient.CompactMeta(obj)
	switch o := obj.(type) {
	case *infrav1.Runtime:
		intern.Strings(&o.Spec)
		o.Status.Conditions = intern.Conditions(o.Status.Conditions, o.Name, o.Spec.Shoot.Name, o.Labels[infrav1.LabelRuntimeID])
		// The words of the state, the step and the shoot's last operation repeat across
		// the fleet; so do the landscape inputs most Runtimes were last checked on.
		st := &o.Status
		st.State = fsmv1.State(intern.String(string(st.State)))
		st.ObservedInputs = intern.String(st.ObservedInputs)
		if st.Step != nil {
			st.Step.Name = intern.String(st.Step.Name)
		}
		if op := st.ShootLastOperation; op != nil {
			op.Description = intern.String(op.Description)
			op.Type = gardencorev1beta1.LastOperationType(intern.String(string(op.Type)))
			op.State = gardencorev1beta1.LastOperationState(intern.String(string(op.State)))
		}
		if g := st.Gardener; g != nil && g.LastOperation != nil {
			intern.Strings(g.LastOperation)
		}
		return runtimectrl.StoreRuntime(o), nil
	case *infrav1.GardenerCluster:
		intern.Strings(&o.Spec)
		o.Status.Conditions = intern.Conditions(o.Status.Conditions, o.Name, o.Spec.Shoot.Name)
		return storeCluster(o), nil
	}
	return obj, nil
}
