package gardener

import (
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestTrimShoot keeps of a shoot what the steps read: its metadata but the managedFields, its
// spec but the Kubernetes settings the render leaves to Gardener, and of its status the last
// operation, the last errors, the observed generation and the advertised addresses.
func TestTrimShoot(t *testing.T) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "garden-kyma", Generation: 3,
		Labels: map[string]string{"infrastructuremanager.kyma-project.io/runtime-name": "rt-1"}, Annotations: map[string]string{"infrastructuremanager.kyma-project.io/applied-hash": "abc"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "infrastructure-manager"}}}}
	shoot.Spec.Kubernetes.Version = "1.33.2"
	unrendered := gardencorev1beta1.Kubernetes{VerticalPodAutoscaler: &gardencorev1beta1.VerticalPodAutoscaler{Enabled: true},
		KubeProxy: &gardencorev1beta1.KubeProxyConfig{Enabled: ptr.To(true)}}
	shoot.Status = gardencorev1beta1.ShootStatus{
		LastOperation:       &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile, State: gardencorev1beta1.LastOperationStateSucceeded},
		LastErrors:          []gardencorev1beta1.LastError{{Description: "quota exceeded"}},
		ObservedGeneration:  3,
		Conditions:          []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootAPIServerAvailable, Message: "API server is healthy"}},
		Constraints:         []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootHibernationPossible}},
		TechnicalID:         "shoot--kyma--s1",
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: "https://api.s1.example"}},
	}
	want := shoot.DeepCopy()
	want.ManagedFields = nil
	shoot.Spec.Kubernetes.VerticalPodAutoscaler, shoot.Spec.Kubernetes.KubeProxy = unrendered.VerticalPodAutoscaler, unrendered.KubeProxy
	want.Status = gardencorev1beta1.ShootStatus{LastOperation: shoot.Status.LastOperation.DeepCopy(),
		LastErrors: slices.Clone(shoot.Status.LastErrors), ObservedGeneration: 3, AdvertisedAddresses: slices.Clone(shoot.Status.AdvertisedAddresses)}

	got := TrimShoot(shoot)
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("trimmed shoot:\n%+v\nwant\n%+v", got, want)
	}

}
