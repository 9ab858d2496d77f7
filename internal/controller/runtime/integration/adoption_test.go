package integration_test

import (
	"context"
	"fmt"
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
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv/upstream"
)

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
	rt := kebRuntime(t, "adopted-1")
	rt.Spec.Security.Administrators = []string{"admin@example.com"}

	shoot := leaveShootAsUpstream(t, rt, true)
	generation, spec := shoot.Generation, shoot.Spec.DeepCopy()
	rc := leaveClusterAsUpstream(t, rt, shoot, "admin@example.com", "former-admin@example.com")
	marks := marksOf(t, rt)

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

	var tr takeoverTrace
	tr.trace(t, rt, marks)
	t.Logf("takeover: %d shoot spec changes, %d structured-auth ConfigMap writes, %d kubeconfig rotations (%d before due)",
		tr.specChanges, tr.authWrites, tr.rotations, tr.early)
	if tr.specChanges != 0 || tr.authWrites != 0 || tr.early != 0 {
		t.Errorf("takeover changed what upstream left: %+v, want no spec change, no ConfigMap write and no rotation before due", tr)
	}
	if got := rt.Finalizers; len(got) != 1 || got[0] != runtimectrl.Finalizer {
		t.Errorf("finalizers = %v, want only %s", got, runtimectrl.Finalizer)
	}
	if got := adminSubjects(t, rc); len(got) != 0 {
		t.Errorf("this manager's own bindings = %v, want none: upstream's binding stands for the administrator", got)
	}
	if err := rc.Get(ctx, client.ObjectKey{Name: "admin-kept"}, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("upstream's binding of a listed administrator: %v, want it kept", err)
	}
	if n := clusterAdminBindings(t, rc, "admin@example.com"); n != 1 {
		t.Errorf("the listed administrator has %d cluster-admin bindings, want 1", n)
	}
	assertGone(t, rc, client.ObjectKey{Name: "admin-removed"}, &rbacv1.ClusterRoleBinding{})
	assertGone(t, rc, client.ObjectKey{Name: "kyma-oidc-7"}, openIDConnect("kyma-oidc-7"))
	assertOpenIDConnects(t, rc, rt)

	if err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), shoot); err != nil {
		t.Fatal(err)
	}
	if shoot.Generation != generation {
		t.Errorf("shoot generation %d, want %d: taking over changed the shoot's spec (-before +after):\n%s", shoot.Generation, generation, diff.Diff(spec, &shoot.Spec))
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
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = "2026-01-01T00:00:00Z" // recheck
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, time.Minute, "re-checked", func(rt *infrav1.Runtime) bool {
		return rt.Status.RetryRequestedAt == "2026-01-01T00:00:00Z" && rt.Status.Step != nil && rt.Status.Step.Name == "Done"
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
	err := testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
	})
	if err != nil {
		t.Fatalf("the adopted runtime is not deleted: %v", err)
	}
	assertGone(t, garden, client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: shoot.Name}, &gardencorev1beta1.Shoot{})
	assertGone(t, garden, client.ObjectKey{Namespace: shoot.Namespace, Name: gardener.AuthenticationConfigName(shoot.Name)}, &corev1.ConfigMap{})
}

// kebRuntime is upstream's AWS example with a username prefix ("-"): without one, the structured
// authentication configuration upstream writes for it is one kube-apiserver refuses (a claim
// needs a prefix), so no runtime upstream left Ready has none. Upstream writes the prefix as it
// is.
func kebRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	rt := awsRuntime(t, name)
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.UsernamePrefix = ptr.To("-")
	return rt
}

// upstreamGardenClient reaches the garden through the simulator's front, as a manager does.
func upstreamGardenClient(t *testing.T) client.Client {
	t.Helper()
	gc, err := client.New(sim.RESTConfig(), client.Options{Scheme: garden.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return gc
}

// leaveShootAsUpstream creates rt's authentication ConfigMap and shoot as upstream's manager
// leaves them, through Gardener's admission: the shoot in upstream's layout (upstream.Shoot,
// applied by field manager kim), the ConfigMap in upstream's words (upstream.AuthenticationConfigMap,
// created by upstream's binary, field manager manager). With ready set it waits until Gardener
// has reconciled the shoot.
func leaveShootAsUpstream(t *testing.T, rt *infrav1.Runtime, ready bool) *gardencorev1beta1.Shoot {
	t.Helper()
	opts := renderOptions(t, rt)
	r, err := runtimectrl.Render(rt, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	shoot, err := upstream.Shoot(rt, r.Shoot)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := upstream.AuthenticationConfigMap(rt, opts.DefaultOIDC, shoot.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	gc := upstreamGardenClient(t)
	if cm != nil {
		if err := gc.Create(t.Context(), cm, client.FieldOwner(upstream.FieldManager)); err != nil {
			t.Fatalf("create %s as upstream: %v", cm.Name, err)
		}
	}
	if err := gc.Create(t.Context(), shoot, client.FieldOwner(upstream.ShootFieldManager)); err != nil {
		t.Fatalf("create shoot %s as upstream: %v", shoot.Name, err)
	}
	if !ready {
		return shoot
	}
	err = testenv.Eventually(t.Context(), 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), shoot); err != nil {
			return false, err
		}
		op := shoot.Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded, nil
	})
	if err != nil {
		t.Fatalf("upstream's shoot %s is not reconciled: %v", shoot.Name, err)
	}
	return shoot
}

// leaveClusterAsUpstream creates what upstream leaves for a Ready runtime besides its shoot:
// the GardenerCluster and the kubeconfig Secret its GardenerCluster controller wrote (synced
// now), and in the shoot's cluster kyma-system, one administrator binding for admin and one for
// a former administrator, and an OpenIDConnect for a provider the Runtime no longer lists
// (kyma-oidc-7). It returns a client of the cluster.
func leaveClusterAsUpstream(t *testing.T, rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, admin, former string) client.Client {
	t.Helper()
	ctx := t.Context()
	req := &authenticationv1alpha1.AdminKubeconfigRequest{Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	if err := upstreamGardenClient(t).SubResource("adminkubeconfig").Create(ctx, shoot, req); err != nil {
		t.Fatal(err)
	}
	rc := kubeconfigClient(t, req.Status.Kubeconfig)
	gc := upstream.GardenerCluster(rt, shoot)
	for _, obj := range []client.Object{gc, upstream.KubeconfigSecret(gc, req.Status.Kubeconfig, time.Now())} {
		if err := env.Client.Create(ctx, obj, client.FieldOwner(upstream.FieldManager)); err != nil {
			t.Fatalf("create %T %s as upstream: %v", obj, obj.GetName(), err)
		}
	}
	stale := openIDConnect("kyma-oidc-7")
	stale.SetLabels(map[string]string{runtimectrl.LabelUpstreamManagedBy: "infrastructure-manager"})
	_ = unstructured.SetNestedField(stale.Object, map[string]any{"issuerURL": "https://removed.example.com", "clientID": "removed"}, "spec")
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimectrl.KymaNamespace}},
		upstream.AdminBinding("admin-kept", admin),
		upstream.AdminBinding("admin-removed", former),
		stale,
	} {
		if err := rc.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("create %s as upstream: %v", obj.GetName(), err)
		}
	}
	return rc
}

// waitScheduled waits until Gardener's scheduler has bound the shoot to a seed: the binding sets
// spec.seedName, which is Gardener's change of the spec, not the takeover's.
func waitScheduled(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	t.Helper()
	err := testenv.Eventually(t.Context(), time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), shoot); err != nil {
			return false, err
		}
		return shoot.Spec.SeedName != nil, nil
	})
	if err != nil {
		t.Fatalf("shoot %s is not scheduled: %v", shoot.Name, err)
	}
}

// upstreamMarks is what a runtime upstream left looks like before the takeover: its shoot's
// generation, the resourceVersion of its structured-auth ConfigMap and the last sync of its
// kubeconfig Secret ("" for none).
type upstreamMarks struct {
	generation  int64
	authVersion string
	lastSync    string
}

// marksOf reads the marks of rt's objects.
func marksOf(t *testing.T, rt *infrav1.Runtime) upstreamMarks {
	t.Helper()
	ctx := t.Context()
	ns := gardensim.ProjectNamespace(project)
	var m upstreamMarks
	shoot := &gardencorev1beta1.Shoot{}
	if err := garden.Get(ctx, client.ObjectKey{Namespace: ns, Name: rt.Spec.Shoot.Name}, shoot); err != nil {
		t.Fatal(err)
	}
	m.generation = shoot.Generation
	cm := &corev1.ConfigMap{}
	if err := garden.Get(ctx, client.ObjectKey{Namespace: ns, Name: gardener.AuthenticationConfigName(rt.Spec.Shoot.Name)}, cm); err == nil {
		m.authVersion = cm.ResourceVersion
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]}, secret); err == nil {
		m.lastSync = secret.Annotations[infrav1.AnnotationLastSync]
	}
	return m
}

// takeoverTrace counts what the takeover changed of what upstream left.
type takeoverTrace struct {
	// specChanges are shoots whose spec changed (a new generation); authWrites structured-auth
	// ConfigMaps written; rotations kubeconfigs rotated, early those rotated before upstream's
	// rule made them due.
	specChanges, authWrites, rotations, early int
	// changed names the runtimes whose shoot spec or ConfigMap changed, or whose kubeconfig
	// was rotated early.
	changed []string
}

// trace compares rt's objects now with the marks before the takeover, into tr.
func (tr *takeoverTrace) trace(t *testing.T, rt *infrav1.Runtime, before upstreamMarks) {
	t.Helper()
	after := marksOf(t, rt)
	if after.generation != before.generation {
		tr.specChanges++
		tr.changed = append(tr.changed, rt.Name+" (shoot spec)")
	}
	if before.authVersion != "" && after.authVersion != before.authVersion {
		tr.authWrites++
		tr.changed = append(tr.changed, rt.Name+" (ConfigMap)")
	}
	if before.lastSync == "" || after.lastSync == before.lastSync {
		return
	}
	tr.rotations++
	synced, err1 := time.Parse(time.RFC3339, before.lastSync)
	rotated, err2 := time.Parse(time.RFC3339, after.lastSync)
	o := managerOptions()
	due := time.Duration(0.95 * o.KubeconfigRotateAfter * float64(o.KubeconfigLifetime))
	// last-sync has a resolution of one second.
	if err1 != nil || err2 != nil || rotated.Before(synced.Add(due).Add(-time.Second)) {
		tr.early++
		tr.changed = append(tr.changed, rt.Name+" (kubeconfig rotated early)")
	}
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
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = "2026-01-01T00:01:00Z" // forced
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, time.Minute, "re-checked", func(rt *infrav1.Runtime) bool {
		return rt.Status.RetryRequestedAt == "2026-01-01T00:01:00Z" && rt.Status.Step != nil && rt.Status.Step.Name == "Done"
	})
	if d := diffCalls(calls, gardenCalls(t)); d["patch/200"] < 1 {
		t.Errorf("forced: Gardener calls %v, want the shoot patched", d)
	}
}

// adoptionCase is one kind of runtime upstream leaves, in TestAdoptTwentyUpstreamRuntimes.
type adoptionCase struct {
	// kind names it in the runtimes' names (a shoot name and its project have at most 21
	// characters together); count is how many of it the scenario has.
	kind  string
	count int
	// leave creates what upstream left, before the Runtime.
	leave func(t *testing.T, rt *infrav1.Runtime)
	// deleted deletes the Runtime right after creating it, as one upstream was deleting.
	deleted bool
	// want is the state the Runtime must end in; "" means gone.
	want infrav1.State
}

// upstreamLandscape is the runtimes upstream leaves in every state, twenty in all: Ready ones
// (some with a removed administrator), ones whose shoot is still being created, Failed ones whose
// shoot Gardener refused, and ones being deleted.
func upstreamLandscape() []adoptionCase {
	return []adoptionCase{
		{kind: "r", count: 9, want: infrav1.StateReady, leave: func(t *testing.T, rt *infrav1.Runtime) {
			leaveClusterAsUpstream(t, rt, leaveShootAsUpstream(t, rt, true), rt.Spec.Security.Administrators[0], "nobody@example.com")
		}},
		{kind: "ra", count: 3, want: infrav1.StateReady, leave: func(t *testing.T, rt *infrav1.Runtime) {
			leaveClusterAsUpstream(t, rt, leaveShootAsUpstream(t, rt, true), rt.Spec.Security.Administrators[0], "former-admin@example.com")
		}},
		{kind: "p", count: 4, want: infrav1.StateReady, leave: func(t *testing.T, rt *infrav1.Runtime) {
			waitScheduled(t, leaveShootAsUpstream(t, rt, false))
		}},
		{kind: "f", count: 2, want: infrav1.StateFailed, leave: func(_ *testing.T, rt *infrav1.Runtime) {
			// A version Gardener no longer offers: upstream's create was refused, no shoot.
			rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.28.7")
		}},
		{kind: "d", count: 2, deleted: true, leave: func(t *testing.T, rt *infrav1.Runtime) {
			leaveShootAsUpstream(t, rt, true)
		}},
	}
}

// adopted is one runtime of the landscape: its Runtime, its case, and the marks of what
// upstream left (nil for a Failed one and one being deleted).
type adopted struct {
	rt    *infrav1.Runtime
	c     adoptionCase
	marks *upstreamMarks
}

// leaveUpstream lays out the runtimes of cases as upstream leaves them, named prefix-kind-i in
// namespace ns; their Runtimes are not created yet.
func leaveUpstream(t *testing.T, cases []adoptionCase, prefix, ns string) []adopted {
	t.Helper()
	var all []adopted
	for _, c := range cases {
		for i := range c.count {
			rt := kebRuntime(t, fmt.Sprintf("%s-%s-%d", prefix, c.kind, i))
			rt.Namespace = ns
			rt.Spec.Security.Administrators = []string{"admin@example.com"}
			c.leave(t, rt)
			a := adopted{rt: rt, c: c}
			if c.kind != "f" && !c.deleted {
				m := marksOf(t, rt)
				a.marks = &m
			}
			all = append(all, a)
		}
	}
	return all
}

// createUpstreamRuntimes creates the Runtimes of all as upstream leaves them, with upstream's
// finalizer, and deletes those upstream was deleting.
func createUpstreamRuntimes(t *testing.T, all []adopted) {
	t.Helper()
	ctx := t.Context()
	for _, a := range all {
		a.rt.Finalizers = []string{runtimectrl.UpstreamFinalizer}
		if err := env.Client.Create(ctx, a.rt); err != nil {
			t.Fatal(err)
		}
		if a.c.deleted {
			if err := env.Client.Delete(ctx, a.rt); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Cleanup(func() { deleteRuntime(t, a.rt) })
		}
	}
}

// waitForTakeover waits until every runtime of all ends as its case wants: in its state under
// this manager's finalizer alone, or gone.
func waitForTakeover(t *testing.T, all []adopted) {
	t.Helper()
	for _, a := range all {
		if a.c.want == "" {
			err := testenv.Eventually(t.Context(), 3*time.Minute, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(a.rt), &infrav1.Runtime{})), nil
			})
			if err != nil {
				t.Errorf("%s: not deleted: %v", a.rt.Name, err)
			}
			continue
		}
		got := waitForRuntime(t, a.rt, 3*time.Minute, string(a.c.want), func(rt *infrav1.Runtime) bool {
			return rt.Status.State == a.c.want && (a.c.want != infrav1.StateReady || rt.Status.ProvisioningCompleted)
		})
		if got.Finalizers[0] != runtimectrl.Finalizer || len(got.Finalizers) != 1 {
			t.Errorf("%s: finalizers %v", got.Name, got.Finalizers)
		}
	}
}

// TestAdoptTwentyUpstreamRuntimes takes over the twenty runtimes of upstreamLandscape. Each ends
// in the state it should, the only refusals from Gardener are the ones the Failed runtimes draw,
// and the Gardener writes are counted.
func TestAdoptTwentyUpstreamRuntimes(t *testing.T) {
	all := leaveUpstream(t, upstreamLandscape(), "up", "kcp-system")
	before := gardenCalls(t)
	started := time.Now()
	createUpstreamRuntimes(t, all)
	waitForTakeover(t, all)
	took := time.Since(started)
	var tr takeoverTrace
	for _, a := range all {
		if a.marks != nil {
			tr.trace(t, a.rt, *a.marks)
		}
	}
	t.Logf("takeover of 16 shoots: %d shoot spec changes, %d structured-auth ConfigMap writes, %d kubeconfig rotations (%d before due) %v",
		tr.specChanges, tr.authWrites, tr.rotations, tr.early, tr.changed)
	if tr.specChanges != 0 || tr.authWrites != 0 || tr.early != 0 {
		t.Errorf("takeover changed what upstream left: %+v, want no spec change, no ConfigMap write and no rotation before due", tr)
	}
	calls := diffCalls(before, gardenCalls(t))
	var refusals float64
	for _, n := range gardenRefusals(calls) {
		refusals += n
	}
	t.Logf("adopted %d runtimes in %s; Gardener calls (verb/code: count): %v", len(all), took.Round(100*time.Millisecond), calls)
	// One refusal per Failed runtime: its terminal error spends no attempt and is probed hourly.
	if refusals != 2 {
		t.Errorf("Gardener refused %v writes, want 2 (one per Failed runtime)", refusals)
	}
	// Successful patches: one apply per shoot taken over (12 Ready and 4 still being created),
	// and the deletion confirmation of each of the 2 shoots being deleted. (The Failed runtimes'
	// ConfigMaps are created, 201, and their shoots refused, 403.)
	if got := calls["patch/200"]; got > 16+2 {
		t.Errorf("%v successful patches, want at most 18: one per shoot taken over and one per deletion", got)
	}
}

// gardenRefusals returns the calls of calls (verb/code: count, see gardenCalls) that Gardener
// answered with a client error other than 404, which a read of what does not exist yet draws.
func gardenRefusals(calls map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for call, n := range calls {
		var verb string
		var code int
		if _, err := fmt.Sscanf(strings.Replace(call, "/", " ", 1), "%s %d", &verb, &code); err != nil {
			continue
		}
		if code >= 400 && code < 500 && code != 404 {
			out[call] = n
		}
	}
	return out
}

// clusterAdminBindings counts the ClusterRoleBindings that make user cluster-admin.
func clusterAdminBindings(t *testing.T, c client.Client, user string) int {
	t.Helper()
	list := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range list.Items {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != "cluster-admin" {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.UserKind && s.Name == user {
				n++
			}
		}
	}
	return n
}
