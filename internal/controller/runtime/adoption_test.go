package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim"
)

// upstreamFieldManager is the field manager of upstream's shoot writes.
const upstreamFieldManager = "kim"

// TestAdoptUpstreamRuntime leaves a runtime as upstream leaves a Ready one: the shoot and its
// authentication ConfigMap applied by field manager kim through Gardener's admission, the
// runtime cluster with upstream's administrator bindings (one for an administrator the Runtime
// no longer lists) and OpenIDConnects (one for a provider it no longer lists), and the Runtime
// with upstream's finalizer. This manager takes it over: the Runtime ends Ready under this
// manager's finalizer alone, the removed administrator loses cluster-admin, the stale provider
// goes, nothing is recreated, and the shoot's fields move to this manager without Gardener
// refusing a write. Then the adopted Runtime is deleted, and the deletion completes.
func TestAdoptUpstreamRuntime(t *testing.T) {
	ctx := t.Context()
	rt := awsRuntime(t, "adopted-1")
	rt.Spec.Security.Administrators = []string{"admin@example.com"}

	// What upstream left in the garden.
	r, err := runtimectrl.Render(rt, nil, convertOptions(t, rt))
	if err != nil {
		t.Fatal(err)
	}
	gc, err := client.New(sim.RESTConfig(), client.Options{Scheme: garden.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range r.Objects() {
		for _, l := range []string{runtimectrl.LabelRuntimeName, runtimectrl.LabelRuntimeNamespace, runtimectrl.LabelManagedBy} {
			labels := obj.GetLabels()
			delete(labels, l)
			obj.SetLabels(labels)
		}
		if err := gc.Create(ctx, obj, client.FieldOwner(upstreamFieldManager)); err != nil {
			t.Fatalf("create %s as upstream: %v", obj.GetName(), err)
		}
	}
	shoot := r.Shoot
	err = testenv.Eventually(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), shoot); err != nil {
			return false, err
		}
		op := shoot.Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded, nil
	})
	if err != nil {
		t.Fatalf("upstream's shoot is not reconciled: %v", err)
	}
	generation := shoot.Generation

	// What upstream left in the runtime cluster.
	req := &authenticationv1alpha1.AdminKubeconfigRequest{Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	if err := gc.SubResource("adminkubeconfig").Create(ctx, shoot, req); err != nil {
		t.Fatal(err)
	}
	rc, err := runtimectrl.KubeconfigClient(ctx, req.Status.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	upstreamBinding := func(name, user string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "kyma", runtimectrl.LabelUpstreamReconcilerManagedBy: "infrastructure-manager"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
	}
	stale := openIDConnect("kyma-oidc-7")
	stale.SetLabels(map[string]string{runtimectrl.LabelUpstreamManagedBy: "infrastructure-manager"})
	_ = unstructured.SetNestedField(stale.Object, map[string]any{"issuerURL": "https://removed.example.com", "clientID": "removed"}, "spec")
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimectrl.KymaNamespace}},
		upstreamBinding("admin-kept", "admin@example.com"),
		upstreamBinding("admin-removed", "former-admin@example.com"),
		stale,
	} {
		if err := rc.Create(ctx, obj); err != nil {
			t.Fatalf("create %s as upstream: %v", obj.GetName(), err)
		}
	}

	// The Runtime as upstream left it, which this manager now finds.
	before := gardenCalls(t)
	rt.Finalizers = []string{runtimectrl.UpstreamFinalizer}
	if err := env.Client.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRuntime(t, rt) })
	started := time.Now()
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady && rt.Status.ProvisioningCompleted
	})
	calls := diffCalls(before, gardenCalls(t))
	writes := 0.0
	defer func() {
		if writes > 1 {
			t.Errorf("taking over a Ready runtime that differs in nothing wrote %v times to Gardener, want at most 1", writes)
		}
	}()
	for call, n := range calls {
		if strings.HasPrefix(call, "patch/") || strings.HasPrefix(call, "update/") || strings.HasPrefix(call, "delete/") {
			writes += n
		}
	}
	t.Logf("adopted in %s with these Gardener calls (verb/code: count): %v; writes (patch, update, delete): %v",
		time.Since(started).Round(100*time.Millisecond), calls, writes)

	if got := rt.Finalizers; len(got) != 1 || got[0] != runtimectrl.Finalizer {
		t.Errorf("finalizers = %v, want only %s", got, runtimectrl.Finalizer)
	}
	if got := adminSubjects(t, rc); len(got) != 0 {
		t.Errorf("this manager's own bindings = %v, want none: upstream's binding stands for the administrator", got)
	}
	if err := rc.Get(ctx, client.ObjectKey{Name: "admin-kept"}, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("upstream's binding of a listed administrator: %v, want it kept", err)
	}
	assertGone(t, rc, client.ObjectKey{Name: "admin-removed"}, &rbacv1.ClusterRoleBinding{})
	assertGone(t, rc, client.ObjectKey{Name: "kyma-oidc-7"}, openIDConnect("kyma-oidc-7"))
	assertOpenIDConnects(t, rc, rt)

	if err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), shoot); err != nil {
		t.Fatal(err)
	}
	if shoot.Generation != generation {
		t.Errorf("shoot generation %d, want %d: taking over changed the shoot's spec", shoot.Generation, generation)
	}
	owners := map[string]bool{}
	for _, mf := range shoot.ManagedFields {
		owners[mf.Manager] = true
	}
	if !owners[runtimectrl.FieldOwner] {
		t.Errorf("shoot field managers = %v, want %s among them", owners, runtimectrl.FieldOwner)
	}
	if shoot.Labels[runtimectrl.LabelRuntimeName] != rt.Name {
		t.Errorf("shoot labels = %v, want the Runtime's name", shoot.Labels)
	}

	// A re-check of the Ready runtime finds nothing drifted and writes nothing.
	before = gardenCalls(t)
	if rt.Annotations == nil {
		rt.Annotations = map[string]string{}
	}
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = "recheck"
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, time.Minute, "re-checked", func(rt *infrav1.Runtime) bool {
		return rt.Status.RetryRequestedAt == "recheck" && rt.Status.Step != nil && rt.Status.Step.Name == "Done"
	})
	calls = diffCalls(before, gardenCalls(t))
	for call, n := range calls {
		if strings.HasPrefix(call, "patch/") || strings.HasPrefix(call, "update/") || strings.HasPrefix(call, "delete/") {
			t.Errorf("a re-check of an unchanged runtime wrote to Gardener: %s x%v (all calls %v)", call, n, calls)
		}
	}
	t.Logf("re-check of the adopted runtime: Gardener calls %v", calls)

	// The adopted Runtime's deletion completes.
	if err := env.Client.Delete(ctx, rt); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
	})
	if err != nil {
		t.Fatalf("the adopted runtime is not deleted: %v", err)
	}
	assertGone(t, garden, client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: shoot.Name}, &gardencorev1beta1.Shoot{})
	assertGone(t, garden, client.ObjectKey{Namespace: shoot.Namespace, Name: gardener.AuthenticationConfigName(shoot.Name)}, &corev1.ConfigMap{})
}

// TestDeleteUnadoptedUpstreamRuntime deletes a Runtime that still carries only upstream's
// finalizer: this manager honours it, deletes what the Runtime owns, and lets it go.
func TestDeleteUnadoptedUpstreamRuntime(t *testing.T) {
	rt := awsRuntime(t, "upstream-del-1")
	rt.Finalizers = []string{runtimectrl.UpstreamFinalizer}
	rt.DeletionTimestamp = nil
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	err := testenv.Eventually(t.Context(), 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
	})
	if err != nil {
		got := &infrav1.Runtime{}
		_ = env.Client.Get(t.Context(), client.ObjectKeyFromObject(rt), got)
		t.Fatalf("a Runtime with upstream's finalizer hangs in deletion: %v; finalizers %v, status %+v", err, got.Finalizers, got.Status)
	}
}

// TestSuspendAndForcePatch follows upstream's annotations: with suspend-patch-reconciliation a
// changed Runtime leaves its shoot alone; without it the change reaches the shoot; with
// force-patch-reconciliation a re-check writes even though nothing drifted.
func TestSuspendAndForcePatch(t *testing.T) {
	ctx := t.Context()
	rt := newRuntime(t, "suspend-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	shootKey := client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}
	maxOf := func() int32 {
		shoot := &gardencorev1beta1.Shoot{}
		if err := garden.Get(ctx, shootKey, shoot); err != nil {
			t.Fatal(err)
		}
		return shoot.Spec.Provider.Workers[0].Maximum
	}
	before := maxOf()

	rt.Annotations = map[string]string{runtimectrl.AnnotationSuspendPatch: "true"}
	rt.Spec.Shoot.Provider.Workers[0].Maximum = before + 1
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, time.Minute, "Ready at the new generation", readyAt(rt.Generation))
	if got := maxOf(); got != before {
		t.Errorf("suspended: worker maximum %d, want %d: the shoot was written", got, before)
	}

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
		t.Fatal(err)
	}
	delete(rt.Annotations, runtimectrl.AnnotationSuspendPatch)
	rt.Spec.Shoot.Provider.Workers[0].Maximum = before + 2
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, time.Minute, "Ready at the new generation", readyAt(rt.Generation))
	if got := maxOf(); got != before+2 {
		t.Errorf("resumed: worker maximum %d, want %d", got, before+2)
	}

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
		t.Fatal(err)
	}
	calls := gardenCalls(t)
	if rt.Annotations == nil {
		rt.Annotations = map[string]string{}
	}
	rt.Annotations[runtimectrl.AnnotationForcePatch] = "true"
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = "forced"
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, time.Minute, "re-checked", func(rt *infrav1.Runtime) bool {
		return rt.Status.RetryRequestedAt == "forced" && rt.Status.Step != nil && rt.Status.Step.Name == "Done"
	})
	if d := diffCalls(calls, gardenCalls(t)); d["patch/200"] < 1 {
		t.Errorf("forced: Gardener calls %v, want the shoot patched", d)
	}
}
