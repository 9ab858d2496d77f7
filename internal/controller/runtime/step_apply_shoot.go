package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// applyShoot makes the shoot match the Runtime with a server-side apply under the controller's
// field manager. The shoot's name is the Runtime's shoot name, so applying again after a lost
// reply finds the same shoot instead of creating a second one, and fields the controller
// applied before but no longer wants are removed by the apply. The one thing apply cannot
// remove is a worker pool that another field manager also lists; removeWorkers does.
func (s steps) applyShoot(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot, err := gardener.ShootFromRuntime(rt, s.Convert)
	if err != nil {
		return fsm.Fail(fmt.Errorf("convert runtime to shoot: %w", err))
	}
	if shoot.Labels == nil {
		shoot.Labels = map[string]string{}
	}
	shoot.Labels[LabelRuntimeName] = rt.Name
	shoot.Labels[LabelRuntimeNamespace] = rt.Namespace
	ac, err := applyConfiguration(shoot)
	if err != nil {
		return fsm.Fail(err)
	}
	if err := s.Garden.Apply(ctx, client.ApplyConfigurationFromUnstructured(ac), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fsm.Fail(fmt.Errorf("apply shoot %s: %w", shoot.Name, err))
	}
	if err := s.removeWorkers(ctx, ac, shoot.Spec.Provider.Workers); err != nil {
		return fsm.Fail(err)
	}
	return fsm.Next(StepWaitForShoot)
}

// removeWorkers removes the worker pools of the applied shoot that the Runtime does not want.
// Gardener merges workers by name, so a pool the Runtime dropped stays after the apply when
// another field manager lists it too (an operator's own apply, say), holding only that
// manager's fields. Such a pool is removed with an update of the whole list, guarded by the
// resourceVersion the apply returned: if the shoot changed in between, the update conflicts and
// the step runs again, apply first.
func (s steps) removeWorkers(ctx context.Context, applied *unstructured.Unstructured, want []gardencorev1beta1.Worker) error {
	pools, _, err := unstructured.NestedSlice(applied.Object, "spec", "provider", "workers")
	if err != nil {
		return fmt.Errorf("read worker pools of shoot %s: %w", applied.GetName(), err)
	}
	wanted := make(map[string]bool, len(want))
	for _, w := range want {
		wanted[w.Name] = true
	}
	var keep []any
	var drop []string
	for _, p := range pools {
		name, _, _ := unstructured.NestedString(asMap(p), "name")
		if wanted[name] {
			keep = append(keep, p)
		} else {
			drop = append(drop, name)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	if err := unstructured.SetNestedSlice(applied.Object, keep, "spec", "provider", "workers"); err != nil {
		return fmt.Errorf("set worker pools of shoot %s: %w", applied.GetName(), err)
	}
	// Sent back unchanged, managedFields would be taken as the caller's; left out, the server
	// records this update as usual.
	applied.SetManagedFields(nil)
	if err := s.Garden.Update(ctx, applied, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("remove worker pools %v that another field manager keeps in shoot %s: %w", drop, applied.GetName(), err)
	}
	return nil
}

// asMap returns v as a JSON object, or nil.
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// applyConfiguration turns a typed object into an apply configuration holding exactly the fields
// the object sets, without status and server-set metadata.
func applyConfiguration(obj client.Object) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("decode %s: %w", obj.GetName(), err)
	}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}
