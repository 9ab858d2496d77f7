package runtime

import (
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
)

// TestProvisioningInfoKeys checks each key of kyma-provisioning-info that upstream writes, with
// the value upstream takes for it, as the line upstream's YAML holds.
func TestProvisioningInfoKeys(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	rt.Labels[infrav1.LabelInstanceID] = "env-instance-123"
	rt.Labels[infrav1.LabelKymaName] = "my-kyma-instance"
	rt.Labels[infrav1.LabelGlobalAccountID] = "global-acc-456"
	rt.Labels[infrav1.LabelSubaccountID] = "sub-acc-789"
	rt.Spec.Shoot.Region = "eu-central-1"
	rt.Spec.Shoot.PlatformRegion = "cf-eu12"
	reconciled := time.Date(2026, 11, 3, 9, 30, 0, 0, time.UTC)
	rt.Status.ShootLastOperation = &gardencorev1beta1.LastOperation{LastUpdateTime: metav1.NewTime(reconciled)}
	shoot := &gardencorev1beta1.Shoot{}
	shoot.Spec.Provider.InfrastructureConfig = &k8sruntime.RawExtension{Raw: []byte(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig"}`)}

	cm, err := provisioningInfo(rt, shoot, "eu-west-1", false)
	if err != nil {
		t.Fatal(err)
	}
	details := cm.Data["details"]
	for _, line := range []string{
		// from the Runtime's labels
		"environmentInstanceID: env-instance-123",
		"instanceID: env-instance-123",
		"runtimeID: " + rt.Labels[infrav1.LabelRuntimeID],
		"instanceName: my-kyma-instance",
		"globalAccountID: global-acc-456",
		"subaccountID: sub-acc-789",
		// from the Runtime's spec
		"region: eu-central-1",
		"platformRegion: cf-eu12",
		// from the shoot's seed
		"seedRegion: eu-west-1",
		// from the shoot's last operation, as the Runtime's status mirrors it
		`lastReconcileTime: "2026-11-03T09:30:00Z"`,
		// from the shoot
		"kind: InfrastructureConfig",
		"dualStackIPEnabled: false",
	} {
		if !strings.Contains(details, line) {
			t.Errorf("details lack %q:\n%s", line, details)
		}
	}

	// Without the labels, the seed or a last operation, the keys are left out, as upstream
	// leaves them out.
	bare := newTestRuntime(t, "bare")
	delete(bare.Labels, infrav1.LabelInstanceID)
	delete(bare.Labels, infrav1.LabelKymaName)
	delete(bare.Labels, infrav1.LabelRuntimeID)
	cm, err = provisioningInfo(bare, nil, "", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"environmentInstanceID:", "instanceID:", "runtimeID:", "instanceName:", "seedRegion:", "lastReconcileTime:"} {
		if strings.Contains(cm.Data["details"], key) {
			t.Errorf("details name %s without a value for it:\n%s", key, cm.Data["details"])
		}
	}
}

// TestProvisioningInfoOfUpstream: the ConfigMap upstream left, labelled as upstream labels it,
// with the details the Runtime asks for, is taken over without a write; with other details it
// is written.
func TestProvisioningInfoOfUpstream(t *testing.T) {
	for _, tt := range []struct {
		name string
		// details changes the details upstream left; writes are the runtime cluster's writes.
		details func(string) string
		writes  []string
	}{
		{name: "the same details", details: func(d string) string { return d }},
		{name: "other details", details: func(d string) string { return d + "extra: true\n" }, writes: []string{"apply ConfigMap"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			w := newWorld(t, reachable(rt))
			if out := w.steps.configureCluster(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Done()) {
				t.Fatal("first run")
			}
			ours := &corev1.ConfigMap{}
			ours.Name, ours.Namespace = ProvisioningInfoName, KymaNamespace
			w.get(w.runtime, ours)
			if err := w.runtime.Delete(t.Context(), ours); err != nil {
				t.Fatal(err)
			}
			upstream := &corev1.ConfigMap{Data: map[string]string{"details": tt.details(ours.Data["details"])}}
			upstream.Name, upstream.Namespace = ProvisioningInfoName, KymaNamespace
			upstream.Labels = map[string]string{LabelUpstreamReconcilerManagedBy: upstreamManager}
			w.create(w.runtime, upstream)
			w.resetCalls()

			if out := w.steps.configureCluster(t.Context(), rt); !fsmtest.Check(t, out, fsmtest.Done()) {
				t.Fatal("takeover")
			}
			checkWrites(t, w, "runtime", tt.writes...)
		})
	}
}

// TestSeedRegionIsReadOnce: the seed of a shoot is read from Gardener once; later passes take
// its region from what the controller keeps.
func TestSeedRegionIsReadOnce(t *testing.T) {
	w := newWorld(t)
	w.steps.seedRegions = &sync.Map{}
	seed := testSeed("aws", "eu-central-1", true)
	shoot := &gardencorev1beta1.Shoot{}
	shoot.Name, shoot.Spec.SeedName = "rt", &seed.Name
	for range 3 {
		region, err := w.steps.seedRegion(t.Context(), shoot)
		if err != nil {
			t.Fatal(err)
		}
		if region != seed.Spec.Provider.Region {
			t.Errorf("seed region %q, want %q", region, seed.Spec.Provider.Region)
		}
	}
	if n := w.reads("garden", "Seed"); n != 1 {
		t.Errorf("read the seed %d times, want 1", n)
	}
}

// TestProvisioningInfoRemembersAVerdict: once the provisioning info in the runtime cluster was
// found as the Runtime asks, the verdict stands for the versions of the Runtime, its shoot and
// the ConfigMap it was reached on; an edited ConfigMap is written back.
func TestProvisioningInfoRemembersAVerdict(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	shoot := testShoot(rt)
	shoot.Spec.SeedName = nil
	w := newWorld(t, rt, shoot)
	w.steps.verdicts = &verdicts{}
	stored := func() *infrav1.Runtime { return w.stored(rt) }
	pass := func(what string) *corev1.ConfigMap {
		t.Helper()
		current, err := readProvisioningInfo(t.Context(), w.runtime)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.steps.applyProvisioningInfo(t.Context(), w.runtime, stored(), current); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return current
	}
	pass("the first pass")
	current := pass("the second pass")
	if current == nil {
		t.Fatal("the first pass wrote no provisioning info")
	}
	w.get(w.garden, shoot)
	on := func(rt *infrav1.Runtime, cm *corev1.ConfigMap) string {
		return versionsOf(rt, []client.Object{shoot, cm}, "", "false")
	}
	if !w.steps.verdicts.holds(verdictProvisioningInfo, stored(), on(stored(), current)) {
		t.Fatal("the pass that found the provisioning info as asked left no verdict")
	}
	edited := current.DeepCopy()
	edited.ResourceVersion += "0"
	if w.steps.verdicts.holds(verdictProvisioningInfo, stored(), on(stored(), edited)) {
		t.Error("the verdict stands for another version of the ConfigMap")
	}
	want := current.Data["details"]

	// Someone edits the details in the runtime cluster.
	current.Data["details"] = "runtimeID: someone-else\n"
	if err := w.runtime.Update(t.Context(), current); err != nil {
		t.Fatal(err)
	}
	pass("the pass after the edit")
	w.get(w.runtime, current)
	if got := current.Data["details"]; got != want {
		t.Errorf("details after the edit and a pass:\n%s\nwant them written back:\n%s", got, want)
	}
}
