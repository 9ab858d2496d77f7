package gardener

import (
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestTrimShoot keeps of a shoot what the steps read from the cache: its metadata but the
// managedFields and Gardener's own labels and annotations; of its spec the seed, the domain, the
// IP families and the infrastructure configuration; of its status the last operation, the last
// errors, the observed generation and the advertised addresses.
func TestTrimShoot(t *testing.T) {
	infra := &runtime.RawExtension{Raw: []byte(`{"kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"}}}`)}
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "garden-kyma", Generation: 3,
		Labels: map[string]string{"infrastructuremanager.kyma-project.io/runtime-name": "rt-1",
			"provider.extensions.gardener.cloud/aws": "true", "name.seed.gardener.cloud/aws-eu-1": "true"},
		Annotations: map[string]string{"infrastructuremanager.kyma-project.io/applied-hash": "abc",
			"shoot.gardener.cloud/tasks": "deployInfrastructure", "gardener.cloud/created-by": "someone",
			"confirmation.gardener.cloud/deletion": "true", "gardener.cloud/operation": "retry"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "infrastructure-manager"}}}}
	shoot.Spec = gardencorev1beta1.ShootSpec{
		Region: "eu-1", SeedName: ptr.To("aws-eu-1"),
		DNS:        &gardencorev1beta1.DNS{Domain: ptr.To("s1.kyma.example")},
		Networking: &gardencorev1beta1.Networking{Type: ptr.To("calico"), IPFamilies: []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4}},
		Provider: gardencorev1beta1.Provider{Type: "aws", InfrastructureConfig: infra, ControlPlaneConfig: &runtime.RawExtension{Raw: []byte(`{}`)},
			Workers: []gardencorev1beta1.Worker{{Name: "cpu-worker-0", Minimum: 1, Maximum: 3}}},
		Kubernetes: gardencorev1beta1.Kubernetes{Version: "1.33.2", KubeProxy: &gardencorev1beta1.KubeProxyConfig{Enabled: ptr.To(true)}},
	}
	shoot.Status = gardencorev1beta1.ShootStatus{
		LastOperation:       &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile, State: gardencorev1beta1.LastOperationStateSucceeded},
		LastErrors:          []gardencorev1beta1.LastError{{Description: "quota exceeded"}},
		ObservedGeneration:  3,
		Conditions:          []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootAPIServerAvailable, Message: "API server is healthy"}},
		Constraints:         []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootHibernationPossible}},
		TechnicalID:         "shoot--kyma--s1",
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: "https://api.s1.example"}},
	}
	want := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "garden-kyma", Generation: 3,
		Labels: map[string]string{"infrastructuremanager.kyma-project.io/runtime-name": "rt-1"},
		Annotations: map[string]string{"infrastructuremanager.kyma-project.io/applied-hash": "abc",
			"confirmation.gardener.cloud/deletion": "true", "gardener.cloud/operation": "retry"}}}
	want.Spec = gardencorev1beta1.ShootSpec{
		SeedName:   ptr.To("aws-eu-1"),
		DNS:        &gardencorev1beta1.DNS{Domain: ptr.To("s1.kyma.example")},
		Networking: &gardencorev1beta1.Networking{IPFamilies: []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4}},
		Provider:   gardencorev1beta1.Provider{Type: "aws", InfrastructureConfig: infra.DeepCopy()},
	}
	want.Status = gardencorev1beta1.ShootStatus{LastOperation: shoot.Status.LastOperation.DeepCopy(),
		LastErrors: slices.Clone(shoot.Status.LastErrors), ObservedGeneration: 3, AdvertisedAddresses: slices.Clone(shoot.Status.AdvertisedAddresses)}

	got := TrimShoot(shoot)
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("trimmed shoot:\n%+v\nwant\n%+v", got, want)
	}
}

// TestOwnKey names the keys the garden cache drops as Gardener's own, and keeps the ones a
// step reads or the render sets, Gardener's domain or not.
func TestOwnKey(t *testing.T) {
	for key, want := range map[string]bool{
		"provider.extensions.gardener.cloud/aws":                              true,
		"extensions.extensions.gardener.cloud/shoot-dns-service":              true,
		"networking.extensions.gardener.cloud/calico":                         true,
		"operatingsystemconfig.extensions.gardener.cloud/gardenlinux":         true,
		"name.seed.gardener.cloud/aws-eu-central-1":                           true,
		"shoot.gardener.cloud/status":                                         true,
		"shoot.gardener.cloud/tasks":                                          true,
		"gardener.cloud/created-by":                                           true,
		"gardener.cloud/operation":                                            false,
		"confirmation.gardener.cloud/deletion":                                false,
		"shoot.gardener.cloud/cleanup-webhooks-finalize-grace-period-seconds": false,
		"support.gardener.cloud/eu-access-for-cluster-nodes":                  false,
		"infrastructuremanager.kyma-project.io/runtime-name":                  false,
		"kyma-project.io/runtime-id":                                          false,
		"account":                                                             false,
		"extensions.gardener.cloud":                                           false,
		"example.com/provider.extensions.gardener.cloud":                      false,
	} {
		if got := OwnKey(key); got != want {
			t.Errorf("OwnKey(%q) = %v, want %v", key, got, want)
		}
	}
}
