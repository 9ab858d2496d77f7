package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// applyShoot makes the shoot match the Runtime with a server-side apply under the controller's
// field manager. It first reads the shoot as Gardener has it, so the render keeps what a
// running shoot cannot change (network layout, versions it already runs), and before the first
// create of a Runtime that enforces its seed location it checks that a ready seed serves the
// region. The shoot's name is the Runtime's shoot name, so applying again after a lost reply
// finds the same shoot instead of creating a second one, and fields the controller applied
// before but no longer wants are removed by the apply. The one thing apply cannot remove is a
// worker pool that another field manager also lists; removeWorkers does.
func (s steps) applyShoot(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	current, err := s.currentShoot(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	if current == nil {
		if err := s.checkSeed(ctx, rt); err != nil {
			return fsm.Fail(err)
		}
	}
	r, err := Render(rt, current, s.Convert)
	if err != nil {
		return fsm.Fail(err)
	}
	setVersionsCondition(rt, r.Kept)
	shoot := r.Shoot
	ac, err := applyConfiguration(shoot)
	if err != nil {
		return fsm.Fail(err)
	}
	if err := s.Garden.Apply(ctx, client.ApplyConfigurationFromUnstructured(ac), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fsm.Fail(shootWriteError(shoot.Name, err))
	}
	if err := s.removeWorkers(ctx, ac, shoot.Spec.Provider.Workers); err != nil {
		return fsm.Fail(err)
	}
	return fsm.Next(StepWaitForShoot)
}

// Render returns exactly the objects the controller writes to the garden for rt, given the
// shoot as Gardener has it (nil before it exists): the structured authentication ConfigMap and
// the Shoot, labelled with their Runtime. The steps and `kubectl runtime render` both call it.
func Render(rt *infrav1.Runtime, current *gardencorev1beta1.Shoot, opts gardener.ConvertOptions) (gardener.Rendered, error) {
	r, err := gardener.Render(rt, current, opts)
	if err != nil {
		return r, fmt.Errorf("convert runtime to shoot: %w", err)
	}
	for _, obj := range r.Objects() {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, ownerLabels(rt))
		obj.SetLabels(labels)
	}
	return r, nil
}

// shootWriteError wraps the error of a shoot write. Gardener's admission plugins refuse a shoot
// they will never accept (a machine type or version the cloud profile does not offer, a
// missing reference) with 403 Forbidden, which in general may pass; on a write of the shoot,
// whose permission the manager needs for everything else too, it only passes when someone
// changes the Runtime or the landscape, so it is a terminal error: the Runtime fails at once
// with Gardener's message instead of retrying it into exhaustion. Gardener's validation errors
// (422) are terminal anyway.
func shootWriteError(name string, err error) error {
	err = fmt.Errorf("apply shoot %s: %w", name, err)
	if apierrors.IsForbidden(err) {
		return retry.Terminal(ReasonShootRefused, err)
	}
	return err
}

// currentShoot returns the runtime's shoot as Gardener has it, or nil when it does not exist.
func (s steps) currentShoot(ctx context.Context, rt *infrav1.Runtime) (*gardencorev1beta1.Shoot, error) {
	shoot := &gardencorev1beta1.Shoot{}
	err := s.Garden.Get(ctx, client.ObjectKey{Namespace: s.GardenNamespace, Name: rt.Spec.Shoot.Name}, shoot)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get shoot %s: %w", rt.Spec.Shoot.Name, err)
	}
	return shoot, nil
}

// setVersionsCondition says whether the shoot runs the versions the Runtime asks for, or which
// ones were kept higher because Gardener refuses a downgrade.
func setVersionsCondition(rt *infrav1.Runtime, kept []gardener.KeptVersion) {
	if len(kept) == 0 {
		setCondition(rt, infrav1.ConditionVersionsAsRequested, true, ReasonVersionsAsRequested, "The shoot runs the requested versions")
		return
	}
	parts := make([]string, 0, len(kept))
	for _, k := range kept {
		parts = append(parts, k.String())
	}
	setCondition(rt, infrav1.ConditionVersionsAsRequested, false, ReasonDowngradeRefused,
		"Gardener does not downgrade a running shoot: "+strings.Join(parts, "; "))
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
