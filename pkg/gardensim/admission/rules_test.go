package admission_test

import (
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission/admissiontest"
)

// Webhook and plugin message prefixes.
const (
	authnDenied    = `admission webhook "authentication-configuration.gardener.cloud" denied the request: `
	invalidShoot   = `Shoot.core.gardener.cloud "c-1" is invalid: `
	forbiddenShoot = `shoots.core.gardener.cloud "c-1" is forbidden: `
)

func forbidden(message string) *refusal {
	return &refusal{code: http.StatusForbidden, reason: "Forbidden", message: message}
}

func invalid(message string) *refusal {
	return &refusal{code: http.StatusUnprocessableEntity, reason: "Invalid", message: invalidShoot + message}
}

// TestOIDCConfig covers rule 2.
func TestOIDCConfig(t *testing.T) {
	oidc := func(version string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Kubernetes.Version = version
			s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{OIDCConfig: &gardencorev1beta1.OIDCConfig{ //nolint:staticcheck // SA1019: the deprecated field under test.
				ClientID: ptr.To("kyma"), IssuerURL: ptr.To("https://kyma.accounts.ondemand.com"),
			}}
		}
	}
	runCases(t, []admissionCase{
		{
			name: "refused on 1.33", change: oidc("1.33.4"),
			want: invalid(`spec.kubernetes.kubeAPIServer.oidcConfig: Invalid value: {"CABundle":null,"ClientAuthentication":null,"ClientID":"kyma","GroupsClaim":null,"GroupsPrefix":null,"IssuerURL":"https://kyma.accounts.ondemand.com","RequiredClaims":null,"SigningAlgs":null,"UsernameClaim":null,"UsernamePrefix":null}: for Kubernetes versions >= 1.32, oidcConfig field is no longer supported`),
		},
		{name: "admitted on 1.31", change: oidc("1.31.10")},
	})
}

// TestVersionUpdates covers rule 3.
func TestVersionUpdates(t *testing.T) {
	image := func(version string, inPlace bool) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.Workers[0].Machine.Image.Version = ptr.To(version)
			if inPlace {
				s.Spec.Provider.Workers[0].UpdateStrategy = ptr.To(gardencorev1beta1.AutoInPlaceUpdate)
			}
		}
	}
	runCases(t, []admissionCase{
		{
			name: "kubernetes downgrade", old: unchanged,
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.32.8" },
			want: invalid(`[spec.kubernetes.version: Forbidden: kubernetes version downgrade is not supported, ` +
				`spec.provider.workers[0].kubernetes.version: Forbidden: kubernetes version downgrade is not supported]`),
		},
		{
			name: "kubernetes upgrade skipping a minor version",
			old:  func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.31.10" }, change: unchanged,
			want: invalid(`spec.kubernetes.version: Forbidden: kubernetes version upgrade cannot skip a minor version`),
		},
		{
			name: "machine image downgrade of an in-place pool", old: image("1592.4.0", true), change: image("1592.1.0", true),
			want: invalid(`spec.provider.workers[0].machine.image.version: Forbidden: machine image version downgrade is not supported when the update strategy is AutoInPlaceUpdate or ManualInPlaceUpdate`),
		},
		{
			name: "machine image downgrade to an expired version", old: unchanged, change: image("1312.3.0", false),
			want: forbidden(forbiddenShoot + `spec.provider.workers[0].machine.image: Invalid value: {"Name":"gardenlinux","ProviderConfig":null,"Version":"1312.3.0"}: ` +
				`machine image version 'gardenlinux:1312.3.0' is expired, supported machine image versions are: [gardenlinux:1443.10.0 gardenlinux:1443.3.0 gardenlinux:1443.9.0 gardenlinux:1592.1.0 gardenlinux:1592.4.0]`),
		},
		{name: "machine image downgrade of a rolling pool to an active version is allowed", old: unchanged, change: image("1592.1.0", false)},
	})
}

// TestCloudProfile covers rule 4.
func TestCloudProfile(t *testing.T) {
	runCases(t, []admissionCase{
		{
			name:   "unknown cloud profile",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.CloudProfileName = ptr.To("nope") }, //nolint:staticcheck // SA1019: the fixture names its profile by the deprecated field.
			want: &refusal{code: http.StatusInternalServerError, reason: "InternalError",
				message: `Internal error occurred: could not find referenced cloud profile: cloudprofile.core.gardener.cloud "nope" not found`},
		},
		{
			name:   "region not in the profile",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Region = "mars-1" },
			want: forbidden(forbiddenShoot + `[spec.region: Unsupported value: "mars-1": supported values: "eu-central-1", "eu-west-1", "us-east-1", ` +
				`spec.provider.workers[0].zones[0]: Invalid value: "mars-1": this region does not support availability zones, please do not configure them]`),
		},
		{
			name:   "machine type not in the profile",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Machine.Type = "m7.huge" },
			want: forbidden(forbiddenShoot + `spec.provider.workers[0].machine.type: Unsupported value: "m7.huge": supported values: ` +
				`"g4dn.xlarge", "m5.large", "m5.xlarge", "m6i.2xlarge", "m6i.large", "m6i.xlarge"`),
		},
		{
			name:   "kubernetes version not offered",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.29.3" },
			want: forbidden(forbiddenShoot + `spec.kubernetes.version: Unsupported value: "1.29.3": supported values: ` +
				`"1.34.1", "1.34.0", "1.33.4", "1.33.2", "1.32.8", "1.32.5", "1.31.10", "1.31.2", "1.31.1", "1.30.14", "1.30.5"`),
		},
		{
			name:   "expired kubernetes version",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.30.1" },
			want: forbidden(forbiddenShoot + `spec.kubernetes.version: Unsupported value: "1.30.1": supported values: ` +
				`"1.34.1", "1.34.0", "1.33.4", "1.33.2", "1.32.8", "1.32.5", "1.31.10", "1.31.2", "1.31.1", "1.30.14", "1.30.5"`),
		},
		{
			name: "machine image version not offered",
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Provider.Workers[0].Machine.Image.Version = ptr.To("1000.0.0")
			},
			want: forbidden(forbiddenShoot + `spec.provider.workers[0].machine.image.version: Unsupported value: "1000.0.0": supported values: ` +
				`"gardenlinux:1443.10.0", "gardenlinux:1443.3.0", "gardenlinux:1443.9.0", "gardenlinux:1592.1.0", "gardenlinux:1592.4.0"`),
		},
		{
			name:   "machine image not offered",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Machine.Image.Name = "ubuntu" },
			want:   forbidden(forbiddenShoot + `spec.provider.workers[0]: Invalid value: "ubuntu": image is not supported`),
		},
		{
			name:   "volume type unknown",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Volume.Type = ptr.To("st1") },
			want:   forbidden(forbiddenShoot + `spec.provider.workers[0].volume.type: Unsupported value: "st1": supported values: "gp2", "gp3", "io1"`),
		},
		{
			name: "partial versions and a missing image are defaulted from the profile",
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Kubernetes.Version = "1.32"
				s.Spec.Provider.Workers[0].Machine.Image = nil
			},
			check: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				image := s.Spec.Provider.Workers[0].Machine.Image
				if s.Spec.Kubernetes.Version != "1.32.8" || image == nil || image.Name != "gardenlinux" || ptr.Deref(image.Version, "") != "1592.4.0" {
					t.Errorf("version %q, image %+v", s.Spec.Kubernetes.Version, image)
				}
				if s.Annotations["gardener.cloud/created-by"] != "kim" || s.Spec.CloudProfile == nil || s.Spec.CloudProfile.Name != "aws" {
					t.Errorf("annotations %v, cloudProfile %+v", s.Annotations, s.Spec.CloudProfile)
				}
			},
		},
		{
			name:   "a name with two consecutive hyphens",
			change: func(s *gardencorev1beta1.Shoot) { s.Name = "c--1" },
			want:   &refusal{code: http.StatusUnprocessableEntity, reason: "Invalid", message: `Shoot.core.gardener.cloud "c--1" is invalid: metadata.name: Invalid value: "c--1": name may not contain two consecutive hyphens`},
		},
		{
			name: "a pool hosting the control plane",
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Provider.Workers[0].ControlPlane = &gardencorev1beta1.WorkerControlPlane{}
			},
			want: invalid(`spec.provider.workers[0].controlPlane: Forbidden: control plane worker pools are only supported for self-hosted shoots`),
		},
		{
			name:   "kubernetes 1.34 takes neither cloudProfileName nor secretBindingName",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.34.1" },
			want: invalid(`[spec.cloudProfileName: Forbidden: for Kubernetes version >= 1.34, cloudProfileName field is no longer supported, use spec.cloudProfile.name instead, ` +
				`spec.secretBindingName: Forbidden: for Kubernetes versions >= 1.34, secretBindingName field is no longer supported, use spec.credentialsBindingName instead]`),
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
			name: "missing ConfigMap", change: reference,
			want: forbidden(forbiddenShoot + `failed to resolve structured authentication config map reference: configmaps "structured-auth-config-c-1" not found`),
		},
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

// TestDNSDomain covers rule 7: ShootDNS re-assigns the default domain to a
// scheduled shoot whose update drops it, and spec.dns stays immutable.
func TestDNSDomain(t *testing.T) {
	scheduled := func(domain string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.SeedName = ptr.To("aws-eu-central-1")
			s.Spec.DNS = &gardencorev1beta1.DNS{Domain: ptr.To(domain)}
		}
	}
	dropDNS := func(keepSeed bool) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.DNS = nil
			if keepSeed {
				s.Spec.SeedName = ptr.To("aws-eu-central-1")
			}
		}
	}
	cases := []admissionCase{
		{
			name: "an update without the domain gets the default domain again", old: scheduled("c-1.kyma.sim.gardener.local"), change: dropDNS(true),
			check: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if s.Spec.DNS == nil || ptr.Deref(s.Spec.DNS.Domain, "") != "c-1.kyma.sim.gardener.local" {
					t.Errorf("dns = %+v", s.Spec.DNS)
				}
			},
		},
		{
			name: "a custom domain cannot be dropped", old: scheduled("api.example.com"), change: dropDNS(true),
			want: invalid(`spec.dns.domain: Invalid value: "c-1.kyma.sim.gardener.local": field is immutable`),
		},
		{
			name: "an update without seed and domain is refused", old: scheduled("c-1.kyma.sim.gardener.local"), change: dropDNS(false),
			want: invalid(`spec.dns: Invalid value: null: field is immutable`),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := updateRequest(tc.old, tc.change)
			req.DefaultDomain = "sim.gardener.local"
			got, err := admitWith(t, req)
			expectOutcome(t, err, tc.want)
			if err == nil {
				tc.check(t, got)
			}
		})
	}
}
