package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// applyShoot makes the shoot match the Runtime with a server-side apply under the controller's
// field manager, never for a shoot another Runtime owns or one that went missing after the
// runtime was provisioned (mayWriteShoot), and writes only when the shoot drifted from what the Runtime asks: a shoot
// last applied with the same configuration that still holds all its values is left alone (see
// upToDate), unless the Runtime forces the write; a Runtime that suspends patching leaves its
// existing shoot alone altogether. It first reads the shoot as Gardener has it, so the render keeps what a
// running shoot cannot change (network layout, versions it already runs), and before the first
// create of a Runtime that enforces its seed location it checks that a ready seed serves the
// region. The shoot's name is the Runtime's shoot name, so applying again after a lost reply
// finds the same shoot instead of creating a second one, and fields the controller applied
// before but no longer wants are removed by the apply. The one thing apply cannot remove is a
// worker pool that another field manager also lists; removeWorkers does that first.
func (s steps) applyShoot(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	current, err := s.currentShoot(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	if err := s.mayWriteShoot(ctx, rt, current); err != nil {
		return fsm.Fail(err)
	}
	// The fingerprint the engine took when this pass started.
	inputs := rt.Status.ObservedInputs
	if !patchForced(rt) && s.verdicts.holds(verdictShoot, rt, shootVerdict(rt, current, inputs)) {
		// Nothing it depends on changed since this process found the shoot as the Runtime
		// asks: no render, no drift check (verdicts).
		return fsm.Next(StepWaitForShoot)
	}
	// The cached shoot has no spec to compare: the comparison reads the shoot from Gardener.
	if current, err = s.wholeShoot(ctx, current); err != nil {
		return fsm.Fail(err)
	}
	opts, err := s.renderOptions(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	setACLCondition(rt, opts.ACL != nil)
	p, err := PlanShoot(rt, current, opts)
	if err != nil {
		return fsm.Fail(err)
	}
	setVersionsCondition(rt, p.Kept)
	if p.Write == ShootWriteNone || p.Write == ShootWriteSuspended {
		// A re-check finds the shoot as the Runtime asks, or the Runtime asks to leave it
		// alone: nothing to write.
		s.verdicts.found(verdictShoot, rt, shootVerdict(rt, current, inputs))
	}
	if err := s.writeShoot(ctx, rt, p, current); err != nil {
		return fsm.Fail(err)
	}
	return fsm.Next(StepWaitForShoot)
}

// writeShoot carries out the write p plans for rt's shoot, current as Gardener has it.
func (s steps) writeShoot(ctx context.Context, rt *infrav1.Runtime, p ShootPlan, current *gardencorev1beta1.Shoot) error {
	switch p.Write {
	case ShootWriteNone, ShootWriteSuspended:
		// Nothing drifted, or the operators asked to leave the shoot as it is (the runtime is
		// still watched).
		return nil
	case ShootWriteTakeOver:
		if err := s.takeOverShoot(ctx, p.ac, current); err != nil {
			return ShootWriteError(current.Name, err)
		}
		return nil
	case ShootWriteApply:
		if !patchForced(rt) && len(p.Changes) > 0 {
			log.FromContext(ctx).Info("Shoot drifted from what the Runtime asks; applying it again", "shoot", current.Name, "path", p.Changes[0].Path)
		}
		if err := s.removeWorkers(ctx, current, p.shoot.Spec.Provider.Workers); err != nil {
			return err
		}
	}
	if err := s.Garden.Apply(ctx, client.ApplyConfigurationFromUnstructured(p.ac), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return ShootWriteError(p.shoot.Name, err)
	}
	return nil
}

// mayWriteShoot fails when the shoot must not be written: current, the shoot as Gardener has
// it, belongs to another Runtime (takenError); or it is gone after the runtime was provisioned
// (shootMissing); or, before the first create of a Runtime that enforces its seed location, no
// ready seed serves the region (checkSeed).
func (s steps) mayWriteShoot(ctx context.Context, rt *infrav1.Runtime, current *gardencorev1beta1.Shoot) error {
	if current != nil {
		shootFound(rt)
		return takenError(current, rt)
	}
	if err := shootMissing(rt); err != nil {
		return err
	}
	return s.checkSeed(ctx, rt)
}

// takeOverShoot takes over current, a shoot this manager never applied (upstream's manager
// created it) whose spec already holds everything of ac (PlanShoot decides it): it writes only
// ac's labels and annotations, with a JSON merge patch. A Runtime that forces the patch gets the
// apply instead. A server-side apply would do the same with a change of the spec. The API
// server runs an apply through its unstructured form, which encodes every providerConfig again
// with its keys sorted, while upstream's create stored them in the order of its Go types.
// Gardener compares the spec's bytes, sees a change, increases the generation and reconciles the
// shoot: thousands of reconciliations at the moment a landscape switches managers. A merge patch
// leaves the bytes of what it does not name as they are.
func (s steps) takeOverShoot(ctx context.Context, ac *unstructured.Unstructured, current *gardencorev1beta1.Shoot) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      ac.GetLabels(),
		"annotations": ac.GetAnnotations(),
	}})
	if err != nil {
		return fmt.Errorf("encode metadata patch: %w", err)
	}
	if err := s.Garden.Patch(ctx, current.DeepCopy(), client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("take over: %w", err)
	}
	log.FromContext(ctx).Info("Took over a shoot whose spec holds what the Runtime asks; wrote its labels and annotations only", "shoot", current.Name)
	return nil
}

// appliedByUs reports whether the controller's field manager has applied to shoot.
func appliedByUs(shoot *gardencorev1beta1.Shoot) bool {
	return slices.ContainsFunc(shoot.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == FieldOwner && f.Operation == metav1.ManagedFieldsOperationApply
	})
}

// needsWrite stamps the apply configuration ac with its hash and reports whether it must be
// applied: always for a new shoot or when the Runtime forces it, else only when the shoot
// drifted from it. The hash is the one of what the Runtime asks, as the shoot's creation
// rendered it: the values the render keeps from the running shoot (its Gardener-assigned domain,
// versions it runs) are no change of configuration, and the drift check covers them.
func needsWrite(rt *infrav1.Runtime, opts gardener.RenderOptions, ac *unstructured.Unstructured, current *gardencorev1beta1.Shoot) (bool, error) {
	intent := ac
	if current != nil {
		var err error
		if intent, err = renderIntent(rt, opts); err != nil {
			return false, err
		}
	}
	if _, err := withHashOf(ac, intent); err != nil {
		return false, err
	}
	if current == nil || patchForced(rt) {
		return true, nil
	}
	same, err := upToDate(ac, current)
	return !same, err
}

// renderIntent is the shoot's apply configuration as the Runtime asks for it before any shoot
// exists.
func renderIntent(rt *infrav1.Runtime, opts gardener.RenderOptions) (*unstructured.Unstructured, error) {
	r, err := Render(rt, nil, opts)
	if err != nil {
		return nil, err
	}
	return applyConfiguration(r.Shoot)
}

// Render returns exactly the objects the controller writes to the garden for rt, given the
// shoot as Gardener has it (nil before it exists): the structured authentication ConfigMap and
// the Shoot, labelled with their Runtime. The steps and `kubectl runtime render` both call it.
func Render(rt *infrav1.Runtime, current *gardencorev1beta1.Shoot, opts gardener.RenderOptions) (gardener.Rendered, error) {
	r, err := gardener.Render(rt, current, opts)
	if err != nil {
		return r, fmt.Errorf("render runtime to shoot: %w", err)
	}
	for _, obj := range r.Objects() {
		labelForRuntime(obj, rt)
	}
	// As upstream, the shoot records the Runtime generation it was written for.
	annotations := r.Shoot.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationRuntimeGeneration] = strconv.FormatInt(rt.Generation, 10)
	r.Shoot.SetAnnotations(annotations)
	return r, nil
}

// labelForRuntime adds the labels that tie obj to its Runtime.
func labelForRuntime(obj client.Object, rt *infrav1.Runtime) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, ownerLabels(rt))
	obj.SetLabels(labels)
}

// ShootWriteError wraps the error of a shoot write. Gardener's admission plugins refuse a shoot
// they will never accept (a machine type or version the cloud profile does not offer, a
// missing reference) with 403 Forbidden, which in general may pass; on a write of the shoot,
// whose permission the manager needs for everything else too, it only passes when someone
// changes the Runtime or the landscape, so it is a terminal error: the Runtime fails at once
// with Gardener's message instead of retrying it into exhaustion. Gardener's validation errors
// (422) are terminal anyway.
func ShootWriteError(name string, err error) error {
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

// wholeShoot returns cached, a shoot as the garden cache keeps it, as Gardener has it, spec
// included: read past the cache (GardenReader). Without a shoot watch (UnwatchedShoots) or a
// reader past the cache, cached was read from Gardener already and is returned as it is. A shoot
// the cache still holds but Gardener no longer has fails the pass: the cache has not seen the
// deletion yet, and the next pass finds the shoot missing.
func (s steps) wholeShoot(ctx context.Context, cached *gardencorev1beta1.Shoot) (*gardencorev1beta1.Shoot, error) {
	if cached == nil || s.GardenReader == nil || s.UnwatchedShoots {
		return cached, nil
	}
	shoot := &gardencorev1beta1.Shoot{}
	if err := s.GardenReader.Get(ctx, client.ObjectKeyFromObject(cached), shoot); err != nil {
		return nil, fmt.Errorf("read shoot %s from Gardener: %w", cached.Name, err)
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

// removeWorkers removes the worker pools of the current shoot that the Runtime no longer wants,
// before the apply. Gardener merges workers by name, so after an apply that drops a pool, a pool
// that another field manager also lists (an operator's own apply, say) would stay with only that
// manager's fields, and Gardener refuses such a half pool (no machine type). So the pools go
// first, with a write of the whole list guarded by the resourceVersion the shoot was read
// with: if the shoot changed in between, the write conflicts and the step runs again. The write
// names the list alone, so nothing else of the shoot is written back as current has it.
func (s steps) removeWorkers(ctx context.Context, current *gardencorev1beta1.Shoot, want []gardencorev1beta1.Worker) error {
	keep := make([]gardencorev1beta1.Worker, 0, len(current.Spec.Provider.Workers))
	var drop []string
	for _, w := range current.Spec.Provider.Workers {
		if slices.ContainsFunc(want, func(x gardencorev1beta1.Worker) bool { return x.Name == w.Name }) {
			keep = append(keep, w)
		} else {
			drop = append(drop, w.Name)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	// A merge patch of the whole list, on the resourceVersion current was read with.
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": current.ResourceVersion},
		"spec":     map[string]any{"provider": map[string]any{"workers": keep}},
	})
	if err != nil {
		return fmt.Errorf("encode worker pools of shoot %s: %w", current.Name, err)
	}
	if err := s.Garden.Patch(ctx, current.DeepCopy(), client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner)); err != nil {
		return ShootWriteError(current.Name, fmt.Errorf("remove worker pools %v: %w", drop, err))
	}
	return nil
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
