package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// applyShoot makes the shoot match the Runtime with a server-side apply under the controller's
// field manager. The shoot's name is the Runtime's shoot name, so applying again after a lost
// reply finds the same shoot instead of creating a second one, and fields the controller
// applied before but no longer wants (a removed worker pool) are removed by the apply.
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
	return fsm.Next(StepWaitForShoot)
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
