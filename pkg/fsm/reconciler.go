package fsm

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reconciler is the thin layer between controller-runtime and an Engine: it fetches the object,
// hands it to the engine, and persists the status in one patch. It returns an error only when
// it could not read the object or write the status; everything else is in the engine's result.
type Reconciler[T Object] struct {
	client client.Client
	engine *Engine[T]
	newObj func() T
}

// NewReconciler returns a reconciler for objects that newObj creates empty.
func NewReconciler[T Object](c client.Client, engine *Engine[T], newObj func() T) *Reconciler[T] {
	return &Reconciler[T]{client: c, engine: engine, newObj: newObj}
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObj()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.engine.Forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get %s: %w", req.NamespacedName, err)
	}
	before, err := statusJSON(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	res := r.engine.Reconcile(ctx, obj)
	if err := r.patchStatus(ctx, obj, before); err != nil {
		if apierrors.IsNotFound(err) {
			// The last step removed the finalizer and the object is gone.
			r.engine.Forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("patch status of %s: %w", req.NamespacedName, err)
	}
	return res, nil
}

// patchStatus writes what changed in the status since before as a JSON merge patch of the status
// alone, and nothing when nothing changed. Steps may have updated the object itself meanwhile;
// the patch carries no resourceVersion, so it does not conflict with them.
func (r *Reconciler[T]) patchStatus(ctx context.Context, obj T, before []byte) error {
	after, err := statusJSON(obj)
	if err != nil {
		return err
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return fmt.Errorf("compute status patch: %w", err)
	}
	if string(patch) == "{}" {
		return nil
	}
	if err := r.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("patch: %w", err)
	}
	return nil
}

// statusJSON returns {"status": ...} of an object.
func statusJSON(obj client.Object) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
	}
	var whole struct {
		Status json.RawMessage `json:"status,omitempty"`
	}
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, fmt.Errorf("decode %s: %w", obj.GetName(), err)
	}
	out, err := json.Marshal(whole)
	if err != nil {
		return nil, fmt.Errorf("encode status of %s: %w", obj.GetName(), err)
	}
	return out, nil
}
