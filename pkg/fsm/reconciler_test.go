package fsm_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// TestStaleCacheRunsNoStepTwice replays what an informer that has not seen the reconciler's
// writes does (just after a write, or for seconds while it reconnects after an API server
// restart): every cached read returns the widget as it was created. The reconciler notices
// that the cache does not hold the version its last write left and decides on the API
// server's copy, so each step runs once and each step change is one status write.
func TestStaleCacheRunsNoStepTwice(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := addWidgets(scheme); err != nil {
		t.Fatal(err)
	}
	rt := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "rt", Generation: 1}}
	api := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&widget{}).WithObjects(rt).Build()
	created := &widget{}
	if err := api.Get(t.Context(), client.ObjectKeyFromObject(rt), created); err != nil {
		t.Fatal(err)
	}
	writes := 0
	cache := interceptor.NewClient(api, interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
			created.DeepCopyInto(obj.(*widget))
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})

	runs := map[string]int{}
	step := func(name string, out fsm.Outcome) fsm.StepFunc[*widget] {
		return func(context.Context, *widget) fsm.Outcome {
			runs[name]++
			return out
		}
	}
	engine, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Prepare",
		Steps: []fsm.Step[*widget]{
			{Name: "Prepare", Run: step("Prepare", fsm.Next("Create")), Next: []string{"Create"}},
			{Name: "Create", Run: step("Create", fsm.Next("AwaitReady")), Next: []string{"AwaitReady"}},
			{Name: "AwaitReady", Run: step("AwaitReady", fsm.Done())},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := fsm.NewReconciler(cache, engine, func() *widget { return &widget{} }, fsm.WithAPIReader(api))
	for i := range 6 {
		if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rt)}); err != nil {
			t.Fatalf("reconcile %d: %v", i, err)
		}
	}
	got := &widget{}
	if err := api.Get(t.Context(), client.ObjectKeyFromObject(rt), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.State != fsmv1.StateReady {
		t.Errorf("state %s in step %v after 6 reconciles, want Ready", got.Status.State, got.Status.Step)
	}
	for _, name := range []string{"Prepare", "Create", "AwaitReady"} {
		if runs[name] != 1 {
			t.Errorf("step %s ran %d times, want once: %v", name, runs[name], runs)
		}
	}
	if writes != 3 {
		t.Errorf("%d status writes for 3 step changes", writes)
	}
	t.Logf("runs %v, status writes %d", runs, writes)
}

// TestStopDuringTheStatusWrite: the manager stops while the reconciler writes the status (the
// write fails with the canceled context). That is no reconcile error for controller-runtime to
// log: the next process reads the status the API server holds.
func TestStopDuringTheStatusWrite(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := addWidgets(scheme); err != nil {
		t.Fatal(err)
	}
	w := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "w", Generation: 1}}
	api := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&widget{}).WithObjects(w).Build()
	ctx, stop := context.WithCancel(t.Context())
	c := interceptor.NewClient(api, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, _ client.Client, _ string, _ client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
			stop()
			return ctx.Err()
		},
	})
	engine, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Create",
		Steps: []fsm.Step[*widget]{{Name: "Create", Run: func(context.Context, *widget) fsm.Outcome { return fsm.Done() }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := fsm.NewReconciler(c, engine, func() *widget { return &widget{} })
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)})
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("Reconcile = %+v, %v; want no result and no error while the manager stops", res, err)
	}
}

// TestReconcilerForgetsWhatTheCacheHolds: the reconciler remembers the version its status write
// left an object at only until the cache holds that version, so a quiet fleet costs it nothing.
func TestReconcilerForgetsWhatTheCacheHolds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := addWidgets(scheme); err != nil {
		t.Fatal(err)
	}
	w := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "w", Generation: 1}}
	// One client for the cache and the API server: the cache is always up to date.
	api := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&widget{}).WithObjects(w).Build()
	engine, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Prepare",
		Steps: []fsm.Step[*widget]{{Name: "Prepare", Run: func(context.Context, *widget) fsm.Outcome { return fsm.Done() }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := fsm.NewReconciler(api, engine, func() *widget { return &widget{} })
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if n := r.Remembered(); n != 1 {
		t.Fatalf("after the first pass, which wrote the status, %d objects are remembered, want 1", n)
	}
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if n := r.Remembered(); n != 0 {
		t.Errorf("after a quiet pass on a cache that holds the last write, %d objects are remembered, want 0", n)
	}
}
