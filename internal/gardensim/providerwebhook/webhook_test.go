package providerwebhook_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/providerwebhook"
)

// refusal is a webhook's refusal as the garden API server reports it.
type refusal struct {
	code    int32
	reason  metav1.StatusReason
	message string
}

// forbidden is the refusal of an extension's validator answering
// admission.Denied: 403 Forbidden.
func forbidden(providerType, message string) *refusal {
	return &refusal{code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, message: deniedBy(providerType, message)}
}

// invalid is the refusal with field errors of an extension built on
// Gardener v1.136's webhook library: 422 without a reason.
func invalid(providerType, message string) *refusal {
	return &refusal{code: http.StatusUnprocessableEntity, message: deniedBy(providerType, message)}
}

func deniedBy(providerType, message string) string {
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
// message. A valid shoot passing also shows that no other provider's
// webhook saw it: each validator refuses another provider's
// infrastructureConfig.
func TestProviderCodeDecidesCreates(t *testing.T) {
	cases := []struct {
		name     string                         // what the shoot gets wrong, if anything
		provider string                         // the shoot's provider type
		change   func(*gardencorev1beta1.Shoot) // applied to admissiontest.ValidShoot; nil keeps it
		want     *refusal                       // nil for an admitted shoot; {shoot} in its message is the shoot's name
	}{
		{name: "valid", provider: "aws"},
		{name: "valid", provider: "azure"},
		{name: "valid", provider: "gcp"},
		{name: "valid", provider: "openstack"},
		{name: "valid", provider: "alicloud"},
		{
			name: "zone network outside the nodes network", provider: "aws",
			change: infra(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.180.0.0/19"}]}}`),
			want:   invalid("aws", `[networks.zones[0].workers: Invalid value: "10.180.0.0/19": must be a subset of "networking.nodes" ("10.250.0.0/16"), networks.zones[0].workers: Invalid value: "10.180.0.0/19": must be a subset of "networks.vpc.cidr" ("10.250.0.0/16")]`),
		},
		{
			name: "IMDS hop limit out of range", provider: "aws",
			change: workerConfig(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","instanceMetadataOptions":{"httpPutResponseHopLimit":65,"httpTokens":"required"},"kind":"WorkerConfig"}`),
			want:   invalid("aws", `spec.provider.workers[0].providerConfig.instanceMetadataOptions.httpPutResponseHopLimit: Invalid value: 65: only values between 1 and 64 are allowed`),
		},
		{
			name: "zone network outside the nodes network", provider: "azure",
			change: infra(`{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vnet":{"cidr":"10.250.0.0/16"},"zones":[{"cidr":"10.180.0.0/19","name":1}]},"zoned":true}`),
			want:   invalid("azure", `[spec.provider.infrastructureConfig.networks.zones[0].cidr: Invalid value: "10.180.0.0/19": must be a subset of "spec.provider.infrastructureConfig.networks.vnet.cidr" ("10.250.0.0/16"), spec.provider.infrastructureConfig.networks.zones[0].cidr: Invalid value: "10.180.0.0/19": must be a subset of "networking.nodes" ("10.250.0.0/16")]`),
		},
		{
			name: "no controlPlaneConfig", provider: "gcp",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.ControlPlaneConfig = nil },
			want:   forbidden("gcp", `spec.provider.controlPlaneConfig: Required value: controlPlaneConfig must be set for GCP shoots`),
		},
		{
			name: "workers network outside the nodes network", provider: "gcp",
			change: infra(`{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.180.0.0/16"}}`),
			want:   forbidden("gcp", `spec.provider.infrastructureConfig.networks.workers: Invalid value: "10.180.0.0/16": must be a subset of "networking.nodes" ("10.250.0.0/16")`),
		},
		{
			name: "a floating pool the profile does not offer", provider: "openstack",
			change: infra(`{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","floatingPoolName":"no-such-pool","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/16"}}`),
			want:   invalid("openstack", `spec.provider.infrastructureConfig.floatingPoolName: Unsupported value: "no-such-pool": supported values: "FloatingIP-external-kyma-01", "FloatingIP-external-kyma-02"`),
		},
		{
			name: "an unknown load balancer provider", provider: "openstack",
			change: controlPlane(`{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","kind":"ControlPlaneConfig","loadBalancerProvider":"no-such-provider"}`),
			want:   invalid("openstack", `spec.provider.controlPlaneConfig.loadBalancerProvider: Unsupported value: "no-such-provider": supported values: "f5", "amphora"`),
		},
		{
			// Gardener's ResourceReferenceManager refuses it before the webhook (which
			// would refuse it too, reading the binding).
			name: "a secret binding that does not exist", provider: "openstack",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.SecretBindingName = ptr.To("no-such-binding") }, //nolint:staticcheck // SA1019: the deprecated binding the fixture uses.
			want: &refusal{code: http.StatusForbidden, reason: metav1.StatusReasonForbidden,
				message: `shoots.core.gardener.cloud "{shoot}" is forbidden: secretbinding.core.gardener.cloud "no-such-binding" not found`},
		},
		{
			name: "zone network outside the nodes network", provider: "alicloud",
			change: infra(`{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"name":"eu-central-1a","workers":"10.180.0.0/19"}]}}`),
			want:   invalid("alicloud", `[networks.zones[0].workers: Invalid value: "10.180.0.0/19": must be a subset of "networking.nodes" ("10.250.0.0/16"), networks.zones[0].workers: Invalid value: "10.180.0.0/19": must be a subset of "networks.vpc.cidr" ("10.250.0.0/16")]`),
		},
	}
	for i, tc := range cases {
		t.Run(tc.provider+": "+tc.name, func(t *testing.T) {
			shoot := admissiontest.ValidShoot(tc.provider, fmt.Sprintf("c-%d", i), namespace)
			if tc.change != nil {
				tc.change(shoot)
			}
			began := time.Now()
			err := gardenClient.Create(t.Context(), shoot)
			t.Logf("decided in %s", time.Since(began).Round(time.Millisecond))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			want := *tc.want
			want.message = strings.ReplaceAll(want.message, "{shoot}", shoot.Name)
			assertDenied(t, err, &want)
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
		want     *refusal                       // nil for an admitted update
	}{
		{name: "a pool's maximum", provider: "aws", change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Maximum = 5 }},
		{
			name: "the VPC network", provider: "aws",
			change: infra(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.0.0.0/8"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.250.0.0/19"}]}}`),
			want:   invalid("aws", `networks.vpc.cidr: Invalid value: "10.0.0.0/8": field is immutable`),
		},
		{
			name: "the workers network", provider: "gcp",
			change: infra(`{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/17"}}`),
			want:   forbidden("gcp", `spec.provider.infrastructureConfig.networks.workers: Invalid value: "10.250.0.0/17": worker CIDR blocks can only be expanded`),
		},
	}
	for i, tc := range cases {
		t.Run(tc.provider+": "+tc.name, func(t *testing.T) {
			shoot := admissiontest.ValidShoot(tc.provider, fmt.Sprintf("u-%d", i), namespace)
			if err := gardenClient.Create(t.Context(), shoot); err != nil {
				t.Fatalf("create: %v", err)
			}
			tc.change(shoot)
			err := gardenClient.Update(t.Context(), shoot)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			assertDenied(t, err, tc.want)
		})
	}
}

// assertDenied wants exactly the refusal want.
func assertDenied(t *testing.T, err error, want *refusal) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("want a refusal %q, got %v", want.message, err)
	}
	got := status.Status()
	if got.Code != want.code || got.Reason != want.reason || got.Message != want.message {
		t.Errorf("refusal:\n got %d %s %q\nwant %d %s %q", got.Code, got.Reason, got.Message, want.code, want.reason, want.message)
	}
}

// TestDryRunsAreNotSent: the front proxy decides on a dry run before the
// write; only the write goes to the extension.
func TestDryRunsAreNotSent(t *testing.T) {
	shoot := admissiontest.ValidShoot("aws", "dry-run", namespace)
	shoot.Spec.Provider.InfrastructureConfig = nil
	if err := gardenClient.Create(t.Context(), shoot.DeepCopy(), client.DryRunAll); err != nil {
		t.Fatalf("dry run refused: %v", err)
	}
	assertDenied(t, gardenClient.Create(t.Context(), shoot), invalid("aws", "spec.provider.infrastructureConfig: Required value: InfrastructureConfig must be set for AWS shoots"))
}
