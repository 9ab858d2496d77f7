package integration_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestContractsOtherComponentsRead provisions a runtime and finds the names other components
// read where upstream puts them: the GardenerCluster's identifying labels and skr-domain
// annotation, and the kubeconfig Secret's labels (operator.kyma-project.io/kyma-name, by which
// the lifecycle manager finds it), cluster name and last-sync annotation. Then a forced rotation
// replaces the kubeconfig at once and the annotation that forced it goes.
func TestContractsOtherComponentsRead(t *testing.T) {
	rt := newRuntime(t, "contracts-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	id := rt.Labels[infrav1.LabelRuntimeID]

	for _, typ := range []string{infrav1.ConditionProvisioned, infrav1.ConditionKubeconfigReady, infrav1.ConditionOidcConfigured,
		infrav1.ConditionKymaSystemNSCreated, infrav1.ConditionConfigured} {
		if c := meta.FindStatusCondition(rt.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("upstream's condition %s = %+v, want True", typ, c)
		}
	}
	if op := rt.Status.ShootLastOperation; op == nil || op.State != "Succeeded" {
		t.Errorf("status.shootLastOperation = %+v, want the shoot's succeeded operation", op)
	}
	gc := &infrav1.GardenerCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: rt.Namespace, Name: id}, gc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		infrav1.LabelInstanceID: rt.Labels[infrav1.LabelInstanceID], infrav1.LabelRuntimeID: id,
		infrav1.LabelBrokerPlanID: rt.Labels[infrav1.LabelBrokerPlanID], infrav1.LabelBrokerPlanName: rt.Labels[infrav1.LabelBrokerPlanName],
		infrav1.LabelGlobalAccountID: rt.Labels[infrav1.LabelGlobalAccountID], infrav1.LabelSubaccountID: rt.Labels[infrav1.LabelSubaccountID],
		infrav1.LabelKymaName: rt.Labels[infrav1.LabelKymaName], infrav1.LabelPlatformRegion: rt.Spec.Shoot.PlatformRegion,
		infrav1.LabelRegion: rt.Spec.Shoot.Region, infrav1.LabelShootName: rt.Spec.Shoot.Name,
		infrav1.LabelKymaManagedBy: "infrastructure-manager", infrav1.LabelKymaInternal: "true",
	}
	for k, v := range want {
		if gc.Labels[k] != v {
			t.Errorf("GardenerCluster label %s = %q, want %q", k, gc.Labels[k], v)
		}
	}
	if gc.Annotations[infrav1.AnnotationSKRDomain] != rt.Spec.Shoot.Name+".kyma.example.com" {
		t.Errorf("GardenerCluster skr-domain = %q, want the shoot's domain", gc.Annotations[infrav1.AnnotationSKRDomain])
	}

	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + id}
	if err := env.Client.Get(t.Context(), key, secret); err != nil {
		t.Fatal(err)
	}
	want[infrav1.LabelClusterName] = gc.Name
	for k, v := range want {
		if secret.Labels[k] != v {
			t.Errorf("kubeconfig Secret label %s = %q, want %q", k, secret.Labels[k], v)
		}
	}
	lastSync, err := time.Parse(time.RFC3339, secret.Annotations[infrav1.AnnotationLastSync])
	if err != nil {
		t.Fatalf("kubeconfig Secret %s annotation: %v", infrav1.AnnotationLastSync, err)
	}

	// The runtime cluster's kyma-provisioning-info, as upstream writes it.
	info := &corev1.ConfigMap{}
	if err := runtimeClient(t, rt).Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: runtimectrl.ProvisioningInfoName}, info); err != nil {
		t.Fatalf("kyma-provisioning-info: %v", err)
	}
	var details struct {
		WorkerPools struct {
			Kyma struct {
				Name    string `json:"name"`
				HAZones bool   `json:"haZones"`
			} `json:"kyma"`
		} `json:"workerPools"`
		GlobalAccountID      string         `json:"globalAccountID"`
		Region               string         `json:"region"`
		InfrastructureConfig map[string]any `json:"infrastructureConfig"`
		NetworkDetails       struct {
			DualStackIPEnabled *bool `json:"dualStackIPEnabled"`
		} `json:"networkDetails"`
	}
	if err := yaml.Unmarshal([]byte(info.Data["details"]), &details); err != nil {
		t.Fatalf("kyma-provisioning-info details: %v\n%s", err, info.Data["details"])
	}
	w := rt.Spec.Shoot.Provider.Workers[0]
	if details.WorkerPools.Kyma.Name != w.Name || details.WorkerPools.Kyma.HAZones != (len(w.Zones) >= 3) ||
		details.GlobalAccountID != rt.Labels[infrav1.LabelGlobalAccountID] || details.Region != rt.Spec.Shoot.Region ||
		details.InfrastructureConfig["kind"] != "InfrastructureConfig" || details.NetworkDetails.DualStackIPEnabled == nil {
		t.Errorf("kyma-provisioning-info details = %+v", details)
	}

	// Upstream's metrics, under its names and labels, and the expiry of the stored kubeconfig
	// under this manager's.
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["runtimeId"] == id && labels["shoot"] == rt.Spec.Shoot.Name {
				found[f.GetName()] = true
			}
			if labels["runtime_id"] == id && labels["shoot"] == rt.Spec.Shoot.Name && f.GetName() == "infrastructure_manager_kubeconfig_expiration_timestamp_seconds" {
				found[f.GetName()] = m.GetGauge().GetValue() > float64(time.Now().Unix())
			}
		}
	}
	for _, name := range []string{"infrastructure_manager_im_runtime_state", "infrastructure_manager_im_gardener_clusters_state", "infrastructure_manager_im_kubeconfig_expiration",
		"infrastructure_manager_kubeconfig_expiration_timestamp_seconds"} {
		if !found[name] {
			t.Errorf("metric %s has no series for runtime %s (with a time to come, for the expiry)", name, id)
		}
	}

	// Rotation is not due for minutes; forcing it replaces the kubeconfig now.
	time.Sleep(time.Second) // last-sync has a resolution of one second
	if gc.Annotations == nil {
		gc.Annotations = map[string]string{}
	}
	gc.Annotations[infrav1.AnnotationForceKubeconfigRotation] = "true"
	if err := env.Client.Update(t.Context(), gc); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(t.Context(), 30*time.Second, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, secret); err != nil {
			return false, err
		}
		synced, perr := time.Parse(time.RFC3339, secret.Annotations[infrav1.AnnotationLastSync])
		if perr != nil || !synced.After(lastSync) {
			return false, nil //nolint:nilerr // Not synced yet: poll again.
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(gc), gc); err != nil {
			return false, err
		}
		_, still := gc.Annotations[infrav1.AnnotationForceKubeconfigRotation]
		return !still, nil
	})
	if err != nil {
		t.Errorf("forced rotation: last-sync %s (was %s), annotations %v: %v", secret.Annotations[infrav1.AnnotationLastSync], lastSync, gc.Annotations, err)
	}
}
