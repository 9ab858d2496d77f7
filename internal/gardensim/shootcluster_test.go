package gardensim_test

import (
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
)

// TestDedicatedShootClustersAreIsolated checks that two shoots get two API
// servers that share nothing visible.
func TestDedicatedShootClustersAreIsolated(t *testing.T) {
	names := []string{"isolated-a", "isolated-b"}
	for _, n := range names {
		if err := garden.Create(t.Context(), newShoot(n)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, n := range names {
			wg.Go(func() { confirmAndDelete(t, n) })
		}
		wg.Wait()
	})
	clients := map[string]client.Client{}
	for _, n := range names {
		shoot := waitForOperation(t, n, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
		info, _ := sim.ShootCluster(shoot)
		t.Logf("shoot cluster of %s started in %v", n, info.StartedIn.Round(time.Millisecond))
		req, err := adminKubeconfig(t.Context(), n, 3600)
		if err != nil {
			t.Fatalf("admin kubeconfig of %s: %v", n, err)
		}
		clients[n] = shootClient(t, req.Status.Kubeconfig)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a", Namespace: "default"}}
	if err := clients["isolated-a"].Create(t.Context(), cm); err != nil {
		t.Fatalf("create in shoot a: %v", err)
	}
	err := clients["isolated-b"].Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("shoot b sees shoot a's object: %v", err)
	}
}

// TestAdminKubeconfigRefusals checks the replies Gardener gives when no
// kubeconfig can be issued.
func TestAdminKubeconfigRefusals(t *testing.T) {
	setLifecycleRules(t, lifecycle.Rule{
		Name: "pending", Shoot: "pending", Outcome: lifecycle.OutcomeHang,
		Operations: []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate},
	})
	if err := garden.Create(t.Context(), newShoot("pending")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { confirmAndDelete(t, "pending") })
	waitForOperation(t, "pending", gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing)

	tests := []struct {
		name    string           // case name
		shoot   string           // shoot to ask for
		seconds int64            // requested validity
		is      func(error) bool // expected error class
		message string           // expected message
	}{
		{
			name: "unknown shoot", shoot: "nowhere", seconds: 3600, is: apierrors.IsNotFound,
			message: `shoots.core.gardener.cloud "nowhere" not found`,
		},
		{
			name: "shoot without API server yet", shoot: "pending", seconds: 3600, is: apierrors.IsInvalid,
			message: `AdminKubeconfigRequest.authentication.gardener.cloud "pending" is invalid: status.status: Invalid value: null: no suitable advertised address for kube-apiserver found in .status.advertisedAddresses`,
		},
		{
			name: "validity below ten minutes", shoot: "pending", seconds: 60, is: apierrors.IsInvalid,
			message: `AdminKubeconfigRequest.authentication.gardener.cloud "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := adminKubeconfig(t.Context(), tc.shoot, tc.seconds)
			if !tc.is(err) {
				t.Fatalf("error = %v (%T), not of the expected class", err, err)
			}
			if err.Error() != tc.message {
				t.Errorf("message = %q, want %q", err.Error(), tc.message)
			}
		})
	}
}
