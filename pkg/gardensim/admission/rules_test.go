package admission_test

import (
	"fmt"
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission/admissiontest"
)

// Webhook and plugin message prefixes.
const (
	awsDenied       = `admission webhook "validation.aws.provider.extensions.gardener.cloud" denied the request: `
	azureDenied     = `admission webhook "validation.azure.provider.extensions.gardener.cloud" denied the request: `
	gcpDenied       = `admission webhook "validation.gcp.provider.extensions.gardener.cloud" denied the request: `
	openstackDenied = `admission webhook "validation.openstack.provider.extensions.gardener.cloud" denied the request: `
	alicloudDenied  = `admission webhook "validation.alicloud.provider.extensions.gardener.cloud" denied the request: `
	authnDenied     = `admission webhook "authentication-configuration.gardener.cloud" denied the request: `
	invalidShoot    = `Shoot.core.gardener.cloud "c-1" is invalid: `
	forbiddenShoot  = `shoots.core.gardener.cloud "c-1" is forbidden: `
)

func forbidden(message string) *refusal {
	return &refusal{code: http.StatusForbidden, reason: "Forbidden", message: message}
}

func infra(raw string) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(raw)}
	}
}

func noInfra(s *gardencorev1beta1.Shoot) { s.Spec.Provider.InfrastructureConfig = nil }

const (
	awsWrongKind        = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"ControlPlaneConfig"}`
	awsZoneOutsideNodes = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.0.0.0/8"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.180.0.0/19"}]}}`
	awsOverlappingZones = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[` +
		`{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.250.0.0/19"},` +
		`{"internal":"10.250.80.0/20","name":"eu-central-1b","public":"10.250.64.0/20","workers":"10.250.16.0/20"}]}}`
	awsChangedZone           = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.250.0.0/20"}]}}`
	awsChangedVPC            = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.0.0.0/8"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.250.0.0/19"}]}}`
	azureZoneOutsideNodes    = `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vnet":{"cidr":"10.0.0.0/8"},"zones":[{"cidr":"10.180.0.0/19","name":1}]},"zoned":true}`
	azureChangedZone         = `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vnet":{"cidr":"10.250.0.0/16"},"zones":[{"cidr":"10.250.0.0/20","name":1}]},"zoned":true}`
	gcpUnknownField          = `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/16"},"zones":[]}`
	gcpOutsideNodes          = `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.180.0.0/16"}}`
	openstackOutsideNodes    = `{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","floatingPoolName":"FloatingIP-external-kyma-01","kind":"InfrastructureConfig","networks":{"workers":"10.180.0.0/16"}}`
	alicloudWrongVersion     = `{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1beta1","kind":"InfrastructureConfig","networks":{}}`
	alicloudZoneOutsideNodes = `{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.128.0.0/9"},"zones":[{"name":"eu-central-1a","workers":"10.180.0.0/19"}]}}`
	alicloudChangedZone      = `{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"name":"eu-central-1a","workers":"10.250.0.0/20"}]}}`
)

// TestInfrastructureConfig covers rule 1: the provider extensions' checks
// of spec.provider.infrastructureConfig.
func TestInfrastructureConfig(t *testing.T) {
	runCases(t, []admissionCase{
		{
			name: "aws: missing", change: noInfra,
			want: forbidden(awsDenied + "spec.provider.infrastructureConfig: Required value: InfrastructureConfig must be set for AWS shoots"),
		},
		{
			name: "aws: wrong kind", change: infra(awsWrongKind),
			want: forbidden(awsDenied + fmt.Sprintf("spec.provider.infrastructureConfig: Invalid value: %q: isn't a supported version", awsWrongKind)),
		},
		{
			name: "aws: zone network outside the nodes network", change: infra(awsZoneOutsideNodes),
			want: forbidden(awsDenied + `networks.zones[0].workers: Invalid value: "10.180.0.0/19": must be a subset of "networking.nodes" ("10.250.0.0/16")`),
		},
		{
			name: "aws: overlapping zone networks", change: infra(awsOverlappingZones),
			want: forbidden(awsDenied + `networks.zones[1].workers: Invalid value: "10.250.16.0/20": must not overlap with "networks.zones[0].workers" ("10.250.0.0/19")`),
		},
		{
			name:   "aws: worker zone without a zone network",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"eu-central-1b"} },
			want:   forbidden(awsDenied + `spec.provider.workers[0].zones[0]: Invalid value: "eu-central-1b": supported values [eu-central-1a]`),
		},
		{
			name: "aws: changed zone network", old: unchanged, change: infra(awsChangedZone),
			want: forbidden(awsDenied + `networks.zones[0].workers: Invalid value: "10.250.0.0/20": field is immutable`),
		},
		{
			name: "aws: changed VPC network", old: unchanged, change: infra(awsChangedVPC),
			want: forbidden(awsDenied + `networks.vpc.cidr: Invalid value: "10.0.0.0/8": field is immutable`),
		},
		{
			name: "azure: missing", provider: "azure", change: noInfra,
			want: forbidden(azureDenied + "spec.provider.infrastructureConfig: Required value: InfrastructureConfig must be set for Azure shoots"),
		},
		{
			name: "azure: malformed", provider: "azure", change: infra(awsWrongKind),
			want: forbidden(azureDenied + "spec.provider.infrastructureConfig: Forbidden: not allowed to configure an unsupported infrastructureConfig"),
		},
		{
			name: "azure: zone network outside the nodes network", provider: "azure", change: infra(azureZoneOutsideNodes),
			want: forbidden(azureDenied + `spec.provider.infrastructureConfig.networks.zones[0].cidr: Invalid value: "10.180.0.0/19": must be a subset of "networking.nodes" ("10.250.0.0/16")`),
		},
		{
			name: "azure: worker zone without a zone network", provider: "azure",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"2"} },
			want:   forbidden(azureDenied + `spec.provider.workers[0].zones[0]: Invalid value: "2": zone configuration must be specified in "infrastructureConfig.networks.zones"`),
		},
		{
			name: "azure: changed zone network", provider: "azure", old: unchanged, change: infra(azureChangedZone),
			want: forbidden(azureDenied + `spec.provider.infrastructureConfig.networks.zones[0].cidr: Invalid value: "10.250.0.0/20": field is immutable`),
		},
		{
			name: "gcp: missing", provider: "gcp", change: noInfra,
			want: forbidden(gcpDenied + "spec.provider.infrastructureConfig: Required value: infrastructureConfig must be set for GCP shoots"),
		},
		{
			name: "gcp: unknown field", provider: "gcp", change: infra(gcpUnknownField),
			want: forbidden(gcpDenied + `error decoding infrastructureConfig: strict decoding error: unknown field "zones"`),
		},
		{
			name: "gcp: missing controlPlaneConfig", provider: "gcp",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.ControlPlaneConfig = nil },
			want:   forbidden(gcpDenied + "spec.provider.controlPlaneConfig: Required value: controlPlaneConfig must be set for GCP shoots"),
		},
		{
			name: "gcp: workers network outside the nodes network", provider: "gcp", change: infra(gcpOutsideNodes),
			want: forbidden(gcpDenied + `spec.provider.infrastructureConfig.networks.workers: Invalid value: "10.180.0.0/16": must be a subset of "networking.nodes" ("10.250.0.0/16")`),
		},
		{
			name: "openstack: missing", provider: "openstack", change: noInfra,
			want: forbidden(openstackDenied + "spec.provider.infrastructureConfig: Required value: infrastructureConfig must be set for OpenStack shoots"),
		},
		{
			name: "openstack: workers network outside the nodes network", provider: "openstack", change: infra(openstackOutsideNodes),
			want: forbidden(openstackDenied + `spec.provider.infrastructureConfig.networks.workers: Invalid value: "10.180.0.0/16": must be a subset of "networking.nodes" ("10.250.0.0/16")`),
		},
		{
			name: "alicloud: missing", provider: "alicloud", change: noInfra,
			want: forbidden(alicloudDenied + "spec.provider.infrastructureConfig: Required value: InfrastructureConfig must be set for Alicloud shoots"),
		},
		{
			name: "alicloud: wrong version", provider: "alicloud", change: infra(alicloudWrongVersion),
			want: forbidden(alicloudDenied + "spec.provider.infrastructureConfig: Forbidden: not allowed to configure an unsupported infrastructureConfig"),
		},
		{
			name: "alicloud: zone network outside the nodes network", provider: "alicloud", change: infra(alicloudZoneOutsideNodes),
			want: forbidden(alicloudDenied + `networks.zones[0].workers: Invalid value: "10.180.0.0/19": must be a subset of "networking.nodes" ("10.250.0.0/16")`),
		},
		{
			name: "alicloud: worker zone without a zone network", provider: "alicloud",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"eu-central-1b"} },
			want:   forbidden(alicloudDenied + `spec.provider.workers[0].zones[0]: Invalid value: "eu-central-1b": supported values [eu-central-1a]`),
		},
		{
			name: "alicloud: changed zone network", provider: "alicloud", old: unchanged, change: infra(alicloudChangedZone),
			want: forbidden(alicloudDenied + `networks.zones[0]: Invalid value: "10.250.0.0/19": field is immutable`),
		},
	})
}

// TestStructuredAuthentication covers rule 5.
func TestStructuredAuthentication(t *testing.T) {
	reference := func(s *gardencorev1beta1.Shoot) {
		s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{
			StructuredAuthentication: &gardencorev1beta1.StructuredAuthentication{ConfigMapName: "structured-auth-config-c-1"},
		}
	}
	withConfig := func(data map[string]string) func(*admissiontest.Env) {
		return func(e *admissiontest.Env) {
			e.AddConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-config-c-1", Namespace: ns}, Data: data})
		}
	}
	runCases(t, []admissionCase{
		{
			name: "ConfigMap without config.yaml", change: reference, env: withConfig(map[string]string{"other": "x"}),
			want: &refusal{code: http.StatusUnprocessableEntity, message: authnDenied +
				"error getting authentication configuration from ConfigMap garden-kyma/structured-auth-config-c-1: missing authentication configuration key in config.yaml ConfigMap data"},
		},
		{
			name: "invalid configuration", change: reference,
			env: withConfig(map[string]string{"config.yaml": "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://kyma.example\n    audiences: [kyma]\n  claimMappings:\n    username: {claim: sub, prefix: \"\"}\n"}),
			want: &refusal{code: http.StatusUnprocessableEntity, message: authnDenied +
				`provided invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://kyma.example": URL scheme must be https]`},
		},
		{
			name: "valid configuration", change: reference,
			env: func(e *admissiontest.Env) { e.AddConfigMap(admissiontest.AuthenticationConfigMap("c-1", ns)) },
		},
	})
}
