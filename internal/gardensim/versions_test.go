package gardensim_test

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
)

// TestNewestKubernetesForEveryProvider creates a shoot of every provider at the newest
// Kubernetes version of the simulated cloud profiles, 1.35.0, written as Gardener requires from
// 1.34 on (the profile by reference, the credentials by a CredentialsBinding of the provider's
// type): gardener-apiserver and the provider extension's own validator admit it, and the
// gardenlet-like controller creates it.
func TestNewestKubernetesForEveryProvider(t *testing.T) {
	const version = "1.35.0"
	for _, provider := range admissiontest.Providers {
		t.Run(provider, func(t *testing.T) {
			name := "k135-" + provider
			binding := createCredentialsBinding(t, name, provider)
			shoot := admissiontest.ValidShoot(provider, name, namespace)
			shoot.Spec.Kubernetes.Version = version
			shoot.Spec.CloudProfile = &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: *shoot.Spec.CloudProfileName} //nolint:staticcheck // SA1019: the fixture's name, moved to the reference.
			shoot.Spec.CloudProfileName = nil                                                                                            //nolint:staticcheck // SA1019: as above.
			shoot.Spec.SecretBindingName, shoot.Spec.CredentialsBindingName = nil, ptr.To(binding)                                       //nolint:staticcheck // SA1019: the deprecated binding Gardener forbids from 1.34 on.
			if err := garden.Create(t.Context(), shoot); err != nil {
				t.Fatalf("create a %s shoot at Kubernetes %s: %v", provider, version, err)
			}
			t.Cleanup(func() { confirmAndDelete(t, name) })
			created := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
			if got := created.Spec.Kubernetes.Version; got != version {
				t.Errorf("stored Kubernetes version = %s, want %s", got, version)
			}
			if created.Spec.SeedName == nil {
				t.Error("the created shoot has no seed")
			}
		})
	}
}

// createCredentialsBinding creates a Secret with cloud credentials of the provider's shape (the
// openstack extension reads them when it validates a shoot) and a CredentialsBinding of the
// provider's type to it, both named name, and returns the binding's name.
func createCredentialsBinding(t *testing.T, name, provider string) string {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		StringData: admissiontest.CloudCredentials(provider),
	}
	binding := &securityv1alpha1.CredentialsBinding{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: namespace},
		CredentialsRef: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: name, Namespace: namespace},
		Provider:       securityv1alpha1.CredentialsBindingProvider{Type: provider},
	}
	for _, o := range []client.Object{secret, binding} {
		if err := direct.Create(t.Context(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, name, err)
		}
		t.Cleanup(func() {
			if err := direct.Delete(context.WithoutCancel(t.Context()), o); client.IgnoreNotFound(err) != nil {
				t.Errorf("delete %T %s: %v", o, name, err)
			}
		})
	}
	return name
}
