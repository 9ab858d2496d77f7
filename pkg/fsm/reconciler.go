package fsm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reconciler is the thin layer between controller-runtime and an Engine: it fetches the object,
// hands it to the engine, and persists the status in one patch. It returns an error only when
// it could not read the object or write the status; everything else is in the engine's result.
//
// It decides on the state it wrote last: it remembers the resourceVersion its last write left
// each object at until the cache holds it, and while the cache holds another one (the informer
// has not seen the write yet, or is reconnecting after an API server restart), it reads the
// object from the API server instead. So a step that moved on is never run again from a stale
// copy, and no status patch is built on one.
type Reconciler[T Object] struct {
	client client.Client
	reader client.Reader
	engine *Engine[T]
	newObj func() T

	mu      sync.Mutex
	written map[types.NamespacedName]string // resourceVersion after the last write, by object
}

// ReconcilerOption configures a Reconciler.
type ReconcilerOption func(*reconcilerConfig)

type reconcilerConfig struct {
	reader client.Reader
}

// WithAPIReader sets the uncached reader (the manager's GetAPIReader) used when the cache has
// not caught up with the reconciler's own last write. Without it, the client reads again.
func WithAPIReader(r client.Reader) ReconcilerOption {
	return func(c *reconcilerConfig) { c.reader = r }
}

// NewReconciler returns a reconciler for objects that newObj creates empty.
func NewReconciler[T Object](c client.Client, engine *Engine[T], newObj func() T, opts ...ReconcilerOption) *Reconciler[T] {
	cfg := reconcilerConfig{reader: c}
	for _, o := range opts {
		o(&cfg)
	}
	return &Reconciler[T]{client: c, reader: cfg.reader, engine: engine, newObj: newObj,
		written: map[types.NamespacedName]string{}}
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj, err := r.get(ctx, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get %s: %w", req.NamespacedName, err)
	}
	before, err := statusJSON(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	read := obj.GetResourceVersion()
	res := r.engine.Reconcile(ctx, obj)
	wrote, err := r.patchStatus(ctx, obj, before)
	if err != nil {
		if stopping(ctx) {
			// The manager is stopping: the write failed with its context, and the status the
			// API server holds is where the next process starts.
			r.remember(req.NamespacedName, "")
			return ctrl.Result{}, nil
		}
		if apierrors.IsNotFound(err) {
			// The last step removed the finalizer and the object is gone.
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		// What the API server holds now is unknown: read it next time.
		r.remember(req.NamespacedName, "")
		return ctrl.Result{}, fmt.Errorf("patch status of %s: %w", req.NamespacedName, err)
	}
	if wrote || obj.GetResourceVersion() != read {
		// This pass wrote the status, or a step wrote the object itself.
		r.remember(req.NamespacedName, obj.GetResourceVersion())
	}
	return res, nil
}

// get reads the object from the cache, or from the API server when the cache does not hold the
// version the last write left.
func (r *Reconciler[T]) get(ctx context.Context, key types.NamespacedName) (T, error) {
	obj := r.newObj()
	err := r.client.Get(ctx, key, obj)
	r.mu.Lock()
	want, wrote := r.written[key]
	caughtUp := wrote && err == nil && obj.GetResourceVersion() == want
	if caughtUp {
		// The cache holds the last write: there is nothing left to remember until the next
		// one, so a quiet fleet's versions are not kept twice.
		delete(r.written, key)
	}
	r.mu.Unlock()
	if !wrote || caughtUp {
		return obj, err //nolint:wrapcheck // the caller wraps it.
	}
	fresh := r.newObj()
	if err := r.reader.Get(ctx, key, fresh); err != nil {
		return fresh, err //nolint:wrapcheck // the caller wraps it.
	}
	return fresh, nil
}

func (r *Reconciler[T]) remember(key types.NamespacedName, resourceVersion string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written[key] = resourceVersion
}

func (r *Reconciler[T]) forget(key types.NamespacedName) {
	r.mu.Lock()
	delete(r.written, key)
	r.mu.Unlock()
	r.engine.Forget(key)
}

// patchStatus writes what changed in the status since before as a JSON merge patch of the status
// alone, and nothing when nothing changed; it reports whether it wrote. Steps may have updated
// the object itself meanwhile; the patch carries no resourceVersion, so it does not conflict
// with them.
func (r *Reconciler[T]) patchStatus(ctx context.Context, obj T, before []byte) (bool, error) {
	after, err := statusJSON(obj)
	if err != nil {
		return false, err
	}
	if bytes.Equal(before, after) {
		// A quiet pass changes nothing: the encoding is the same, and computing a patch (which
		// decodes both into maps) is skipped.
		return false, nil
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return false, fmt.Errorf("compute status patch: %w", err)
	}
	if string(patch) == "{}" {
		return false, nil
	}
	if err := r.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return false, fmt.Errorf("patch: %w", err)
	}
	return true, nil
}

// statusJSON returns {"status": ...} of an object. It encodes the object's status field alone
// when the object has one with the JSON name "status", as Runtimes and GardenerClusters do: the
// reconciler takes it twice per call, and encoding the whole object (its spec is most of it),
// decoding it and encoding its status again was the larger part of a quiet re-check's JSON work.
func statusJSON(obj client.Object) ([]byte, error) {
	if f, ok := statusField(obj); ok {
		status, err := json.Marshal(f.Interface())
		if err != nil {
			return nil, fmt.Errorf("encode status of %s: %w", obj.GetName(), err)
		}
		if string(status) == "null" {
			return []byte("{}"), nil
		}
		return append(append([]byte(`{"status":`), status...), '}'), nil
	}
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

// statusField is the field of obj (a pointer to a struct) whose JSON name is "status".
func statusField(obj client.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	v = v.Elem()
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "status" && t.Field(i).IsExported() {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
