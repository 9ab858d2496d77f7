package integration_test

import (
	"slices"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
)

func readyAt(generation int64) func(*infrav1.Runtime) bool {
	return func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady && rt.Status.ObservedGeneration == generation
	}
}

func getShoot(t *testing.T, name string) *gardencorev1beta1.Shoot {
	t.Helper()
	shoot := &gardencorev1beta1.Shoot{}
	if err := garden.Get(t.Context(), client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: name}, shoot); err != nil {
		t.Fatal(err)
	}
	return shoot
}

// runtimeClient connects to the runtime's cluster with the stored kubeconfig.
func runtimeClient(t *testing.T, rt *infrav1.Runtime) client.Client {
	t.Helper()
	secret := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]}, secret); err != nil {
		t.Fatal(err)
	}
	return kubeconfigClient(t, secret.Data[runtimectrl.KubeconfigKey])
}

// kubeconfigClient connects to the cluster of an admin kubeconfig, as the manager does.
func kubeconfigClient(t *testing.T, data []byte) client.Client {
	t.Helper()
	cfg, err := kubeconfig.RESTConfig("", data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := runtimectrl.ConfigClient(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// adminSubjects lists the users of the managed administrator bindings.
func adminSubjects(t *testing.T, c client.Client) []string {
	t.Helper()
	list := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(t.Context(), list, client.MatchingLabels{runtimectrl.LabelManagedBy: runtimectrl.FieldOwner}); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, b := range list.Items {
		users = append(users, b.Subjects[0].Name)
	}
	slices.Sort(users)
	return users
}

// TestSpecChangeReachesShootAndCluster changes the worker maximum, the Kubernetes version and
// the administrators of a Ready runtime, then removes one administrator: the shoot and the
// runtime cluster follow, and a binding the controller does not manage is left alone.
func TestSpecChangeReachesShootAndCluster(t *testing.T) {
	rt := newRuntime(t, "update-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	rc := runtimeClient(t, rt)
	foreign := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "someone@example.com"}},
	}
	foreign.Name = "made-by-someone-else"
	if err := rc.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}

	rt.Spec.Shoot.Provider.Workers[0].Maximum = 25
	rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.34.1")
	rt.Spec.Security.Administrators = []string{"a@example.com", "b@example.com", "c@example.com"}
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after the change", readyAt(rt.Generation))
	shoot := getShoot(t, rt.Spec.Shoot.Name)
	if got := shoot.Spec.Provider.Workers[0].Maximum; got != 25 {
		t.Errorf("shoot worker maximum: got %d, want 25", got)
	}
	if got := shoot.Spec.Kubernetes.Version; got != "1.34.1" {
		t.Errorf("shoot Kubernetes version: got %s, want 1.34.1", got)
	}
	if got := adminSubjects(t, rc); !slices.Equal(got, []string{"a@example.com", "b@example.com", "c@example.com"}) {
		t.Errorf("administrators: got %v", got)
	}

	rt.Spec.Security.Administrators = []string{"a@example.com", "c@example.com"}
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, 2*time.Minute, "Ready after removing an administrator", readyAt(rt.Generation))
	if got := adminSubjects(t, rc); !slices.Equal(got, []string{"a@example.com", "c@example.com"}) {
		t.Errorf("administrators after removing b: got %v", got)
	}
	if err := rc.Get(t.Context(), client.ObjectKeyFromObject(foreign), &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("the binding the controller does not manage is gone: %v", err)
	}
}

// TestLostCreateReplyMakesNoSecondShoot drops the reply to the first apply of the shoot after
// Gardener stored it: the retry finds the same shoot by name, and there is only one.
func TestLostCreateReplyMakesNoSecondShoot(t *testing.T) {
	if err := sim.SetFaults([]fault.Rule{{Name: "lost-reply", Match: fault.Match{Verbs: []string{"patch"}, Resource: "shoots", Name: "lost-*"},
		Count: 1, Fault: fault.Fault{Type: fault.TypeDropReply}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	rt := newRuntime(t, "lost-1")
	waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	if hits := sim.FaultRules()[0].Hits; hits != 1 {
		t.Fatalf("the reply was dropped %d times, want 1", hits)
	}
	shoots := &gardencorev1beta1.ShootList{}
	if err := garden.List(t.Context(), shoots, client.InNamespace(gardensim.ProjectNamespace(project)),
		client.MatchingLabels{runtimectrl.LabelRuntimeName: rt.Name}); err != nil {
		t.Fatal(err)
	}
	if len(shoots.Items) != 1 {
		t.Errorf("shoots of the runtime: got %d, want 1", len(shoots.Items))
	}
}

// TestFlakyGardenerStillEndsReady runs the flaky scenario (shoot requests fail at random with
// 500 or 503): every runtime still reaches Ready, and the engine's metrics show the failures and
// retries it went through.
func TestFlakyGardenerStillEndsReady(t *testing.T) {
	sc, err := scenario.Load("flaky")
	if err != nil {
		t.Fatal(err)
	}
	// The manager reads shoots from its watch cache, so a provisioning makes only a handful of
	// Gardener calls; at the scenario's 10% a three-runtime test may see no fault at all. The
	// test keeps the scenario's rules and raises their probability to 30%.
	for i := range sc.Faults {
		sc.Faults[i].Probability = ptr.To(0.3)
	}
	before := counterSum(t, "infrastructure_manager_fsm_step_failures_total") + counterSum(t, "infrastructure_manager_fsm_retries_total")
	if err := sim.ApplyScenario(sc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	var runtimes []*infrav1.Runtime
	for _, name := range []string{"flaky-1", "flaky-2", "flaky-3", "flaky-4"} {
		runtimes = append(runtimes, newRuntime(t, name))
	}
	// The faults end before the Runtimes' deletion (cleanups run last registered first): the
	// test is about provisioning. Deleting under them could exhaust a deletion step's budget of
	// this package's short policy (6 attempts within about 10s, each attempt of DeleteShoot
	// makes two faultable calls), and a Failed deletion is probed only hourly.
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	for _, rt := range runtimes {
		waitForRuntime(t, rt, 3*time.Minute, "Ready despite the faults", readyAt(1))
	}
	hits := 0
	for _, r := range sim.FaultRules() {
		hits += r.Hits
	}
	after := counterSum(t, "infrastructure_manager_fsm_step_failures_total") + counterSum(t, "infrastructure_manager_fsm_retries_total")
	t.Logf("flaky: %d injected faults, %v more step failures and retries", hits, after-before)
	if hits == 0 {
		t.Fatal("the flaky scenario injected no fault")
	}
	if after <= before {
		t.Errorf("the engine's failure and retry counters did not move (%v before, %v after)", before, after)
	}
}

// counterSum adds up every series of a counter on the controller-runtime registry.
func counterSum(t *testing.T, name string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestRemovedWorkerPoolGoesEvenWhenCoOwned removes a worker pool from a Ready runtime after an
// operator applied a change to that pool in the shoot. Server-side apply alone would keep the
// pool with the operator's fields, because Gardener merges workers by name and the operator's
// field manager still lists it; the controller notices and removes it with an update of the
// whole list.
func TestRemovedWorkerPoolGoesEvenWhenCoOwned(t *testing.T) {
	rt := newRuntimeWith(t, "pools-1", func(rt *infrav1.Runtime) {
		extra := *rt.Spec.Shoot.Provider.Workers[0].DeepCopy()
		extra.Name = "worker-1"
		rt.Spec.Shoot.Provider.AdditionalWorkers = &[]infrav1.Worker{extra}
	})
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	shoot := getShoot(t, rt.Spec.Shoot.Name)
	if got := workerNames(shoot); !slices.Equal(got, []string{"worker-0", "worker-1"}) {
		t.Fatalf("shoot workers: got %v, want [worker-0 worker-1]", got)
	}
	// An operator raises worker-1's maximum with a server-side apply of their own, so their
	// field manager co-owns the pool.
	edit := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gardencorev1beta1.SchemeGroupVersion.String(),
		"kind":       "Shoot",
		"metadata":   map[string]any{"name": shoot.Name, "namespace": shoot.Namespace},
		"spec": map[string]any{"provider": map[string]any{"workers": []any{
			map[string]any{"name": "worker-1", "maximum": int64(30)},
		}}},
	}}
	if err := garden.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(edit), client.FieldOwner("operator"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	rt.Spec.Shoot.Provider.AdditionalWorkers = nil
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, 2*time.Minute, "Ready after removing worker-1", readyAt(rt.Generation))
	if got := workerNames(getShoot(t, rt.Spec.Shoot.Name)); !slices.Equal(got, []string{"worker-0"}) {
		t.Errorf("shoot workers after removing worker-1: got %v, want [worker-0]", got)
	}
}

func workerNames(shoot *gardencorev1beta1.Shoot) []string {
	names := make([]string, 0, len(shoot.Spec.Provider.Workers))
	for _, w := range shoot.Spec.Provider.Workers {
		names = append(names, w.Name)
	}
	return names
}

// TestGardenerCountsSpecChangesInTheGeneration checks, on gardener-apiserver itself, the rule
// ApplyShoot's verdict relies on (ADR 0003): a change of a shoot's spec increases its
// generation, and a change of its labels alone does not. The verdict stands while the
// generation and the labels and annotations it keeps are the same; a spec edit that left the
// generation as it was would be a drift the manager never sees.
func TestGardenerCountsSpecChangesInTheGeneration(t *testing.T) {
	rt := waitForRuntime(t, newRuntime(t, "generation-1"), 2*time.Minute, "Ready", readyAt(1))
	shoot := getShoot(t, rt.Spec.Shoot.Name)
	before := shoot.Generation

	labelled := shoot.DeepCopy()
	labelled.Labels["example.com/team"] = "blue"
	if err := garden.Patch(t.Context(), labelled, client.MergeFrom(shoot)); err != nil {
		t.Fatal(err)
	}
	if got := getShoot(t, rt.Spec.Shoot.Name).Generation; got != before {
		t.Errorf("a new label changed the generation from %d to %d", before, got)
	}

	shoot = getShoot(t, rt.Spec.Shoot.Name)
	edited := shoot.DeepCopy()
	edited.Spec.Provider.Workers[0].Maximum += 3
	if err := garden.Patch(t.Context(), edited, client.MergeFrom(shoot)); err != nil {
		t.Fatal(err)
	}
	if got := getShoot(t, rt.Spec.Shoot.Name).Generation; got <= before {
		t.Errorf("an edit of a worker's maximum left the generation at %d (before %d): ApplyShoot's verdict would hide the drift", got, before)
	}
}
