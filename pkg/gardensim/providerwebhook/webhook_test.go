package providerwebhook_test

import (
	"errors"
	"fmt"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission/admissiontest"
	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/providerwebhook"
)

// denied is how the garden API server reports a webhook's refusal.
func denied(providerType, message string) string {
	return fmt.Sprintf("admission webhook %q denied the request: %s", providerwebhook.WebhookName(providerType), message)
}

// infra replaces the infrastructureConfig.
func infra(config string) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(config)}
	}
}

// controlPlane replaces the controlPlaneConfig.
func controlPlane(config string) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Provider.ControlPlaneConfig = &runtime.RawExtension{Raw: []byte(config)}
	}
}

// workerConfig sets the first pool's providerConfig.
func workerConfig(config string) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
	}
}

// TestProviderCodeDecidesCreates creates shoots through the garden API
// server, which calls the webhook: each provider's valid shoot is stored,
// and each refusal is the provider extension's own, with its code and
// message.
func TestProviderCodeDecidesCreates(t *testing.T) {
	cases := []struct {
		name     string                         // what the shoot gets wrong, if anything
		provider string                         // the shoot's provider type
		change   func(*gardencorev1beta1.Shoot) // applied to admissiontest.ValidShoot; nil keeps it
		want     string                         // the refusal's message; empty for an admitted shoot
	}{
		{name: "valid", provider: "aws"},
		{name: "valid", provider: "azure"},
		{name: "valid", provider: "gcp"},
		{name: "valid", provider: "openstack"},
		{name: "valid", provider: "alicloud"},
		{
			name: "zone network outside the nodes network", provider: "aws",
			change: infra(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.180.0.0/19"}]}}`),
			want:   denied("aws", "TODO"),
		},
		{
			name: "IMDS hop limit out of range", provider: "aws",
			change: workerConfig(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","instanceMetadataOptions":{"httpPutResponseHopLimit":65,"httpTokens":"required"},"kind":"WorkerConfig"}`),
			want:   denied("aws", "TODO"),
		},
		{
			name: "zone network outside the nodes network", provider: "azure",
			change: infra(`{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vnet":{"cidr":"10.250.0.0/16"},"zones":[{"cidr":"10.180.0.0/19","name":1}]},"zoned":true}`),
			want:   denied("azure", "TODO"),
		},
		{
			name: "no controlPlaneConfig", provider: "gcp",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.ControlPlaneConfig = nil },
			want:   denied("gcp", "TODO"),
		},
		{
			name: "workers network outside the nodes network", provider: "gcp",
			change: infra(`{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.180.0.0/16"}}`),
			want:   denied("gcp", "TODO"),
		},
		{
			name: "a floating pool the profile does not offer", provider: "openstack",
			change: infra(`{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","floatingPoolName":"no-such-pool","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/16"}}`),
			want:   denied("openstack", "TODO"),
		},
		{
			name: "an unknown load balancer provider", provider: "openstack",
			change: controlPlane(`{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","kind":"ControlPlaneConfig","loadBalancerProvider":"no-such-provider"}`),
			want:   denied("openstack", "TODO"),
		},
		{
			name: "a secret binding that does not exist", provider: "openstack",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.SecretBindingName = ptr.To("no-such-binding") }, //nolint:staticcheck // SA1019: the deprecated binding the fixture uses.
			want:   denied("openstack", "TODO"),
		},
		{
			name: "zone network outside the nodes network", provider: "alicloud",
			change: infra(`{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"name":"eu-central-1a","workers":"10.180.0.0/19"}]}}`),
			want:   denied("alicloud", "TODO"),
		},
	}
	for i, tc := range cases {
		t.Run(tc.provider+": "+tc.name, func(t *testing.T) {
			shoot := admissiontest.ValidShoot(tc.provider, fmt.Sprintf("c-%d", i), namespace)
			if tc.change != nil {
				tc.change(shoot)
			}
			err := garden.Create(t.Context(), shoot)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			assertDenied(t, err, tc.want)
		})
	}
}

// TestProviderCodeDecidesUpdates updates stored shoots: the extensions
// hold networks immutable.
func TestProviderCodeDecidesUpdates(t *testing.T) {
	cases := []struct {
		name     string                         // what the update changes
		provider string                         // the shoot's provider type
		change   func(*gardencorev1beta1.Shoot) // applied to the stored shoot
		want     string                         // the refusal's message; empty for an admitted update
	}{
		{name: "a pool's maximum", provider: "aws", change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Maximum = 5 }},
		{
			name: "the VPC network", provider: "aws",
			change: infra(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.0.0.0/8"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.250.0.0/19"}]}}`),
			want:   denied("aws", "TODO"),
		},
		{
			name: "the workers network", provider: "gcp",
			change: infra(`{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/17"}}`),
			want:   denied("gcp", "TODO"),
		},
	}
	for i, tc := range cases {
		t.Run(tc.provider+": "+tc.name, func(t *testing.T) {
			shoot := admissiontest.ValidShoot(tc.provider, fmt.Sprintf("u-%d", i), namespace)
			if err := garden.Create(t.Context(), shoot); err != nil {
				t.Fatalf("create: %v", err)
			}
			tc.change(shoot)
			err := garden.Update(t.Context(), shoot)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			assertDenied(t, err, tc.want)
		})
	}
}

// assertDenied wants a 403 Forbidden with exactly the message want.
func assertDenied(t *testing.T, err error, want string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("want a refusal %q, got %v", want, err)
	}
	got := status.Status()
	if got.Code != 403 || got.Reason != "Forbidden" || got.Message != want {
		t.Errorf("refusal:\n got %d %s %q\nwant 403 Forbidden %q", got.Code, got.Reason, got.Message, want)
	}
}

// TestUnwatchedTypesPass: a shoot of a provider type without an extension
// webhook is not sent to one.
func TestUnwatchedTypesPass(t *testing.T) {
	shoot := admissiontest.ValidShoot("aws", "other-type", namespace)
	shoot.Spec.Provider.Type = "local"
	if err := garden.Create(t.Context(), shoot, client.DryRunAll); err != nil {
		t.Fatalf("refused: %v", err)
	}
}
