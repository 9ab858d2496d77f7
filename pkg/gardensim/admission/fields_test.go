package admission_test

import (
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// window sets the maintenance time window.
func window(begin, end string) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Maintenance = &gardencorev1beta1.Maintenance{TimeWindow: &gardencorev1beta1.MaintenanceTimeWindow{Begin: begin, End: end}}
	}
}

// tokenExpiration sets serviceAccountConfig.maxTokenExpiration.
func tokenExpiration(d time.Duration) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{
			ServiceAccountConfig: &gardencorev1beta1.ServiceAccountConfig{ExtendTokenExpiration: ptr.To(false), MaxTokenExpiration: &metav1.Duration{Duration: d}},
		}
	}
}

// apiServerGates sets the kube-apiserver's feature gates.
func apiServerGates(gates map[string]bool) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: gates}}
	}
}

// kubeletGates sets the kubelet's feature gates.
func kubeletGates(gates map[string]bool) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Kubernetes.Kubelet = &gardencorev1beta1.KubeletConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: gates}}
	}
}

// TestMaintenanceAndAPIServer covers the API validation of the
// maintenance time window, the service account token bounds and the
// feature gates.
func TestMaintenanceAndAPIServer(t *testing.T) {
	runCases(t, []admissionCase{
		{name: "a four hour window over midnight", change: window("200000+0000", "000000+0000")},
		{
			name: "a window in the wrong format", change: window("2000", "000000+0000"),
			want: invalid(`spec.maintenance.timeWindow.begin/end: Invalid value: {"Begin":"2000","End":"000000+0000"}: could not parse begin time: could not parse the value into the maintenanceTime format: parsing time "2000" as "150405-0700": cannot parse "" as "05"`),
		},
		{
			name: "a window under 30 minutes", change: window("200000+0000", "201000+0000"),
			want: invalid(`spec.maintenance.timeWindow: Invalid value: 600000000000: time window must not be smaller than 30m0s`),
		},
		{
			name: "a window over 6 hours", change: window("180000+0000", "010000+0000"),
			want: invalid(`spec.maintenance.timeWindow: Invalid value: 25200000000000: time window must not be greater than 6h0m0s`),
		},
		{name: "maxTokenExpiration at the lower bound", change: tokenExpiration(720 * time.Hour)},
		{name: "maxTokenExpiration at the upper bound", change: tokenExpiration(2160 * time.Hour)},
		{
			name: "maxTokenExpiration below 30 days", change: tokenExpiration(24 * time.Hour),
			want: invalid(`spec.kubernetes.kubeAPIServer.serviceAccountConfig.maxTokenExpiration: Forbidden: must be at least 720h (30d)`),
		},
		{
			name: "maxTokenExpiration above 90 days", change: tokenExpiration(2400 * time.Hour),
			want: invalid(`spec.kubernetes.kubeAPIServer.serviceAccountConfig.maxTokenExpiration: Forbidden: must be at most 2160h (90d)`),
		},
		{name: "known feature gates", change: on(apiServerGates(map[string]bool{"UserNamespacesSupport": true}), kubeletGates(map[string]bool{"ImageVolume": true}))},
		{
			name: "an unknown kube-apiserver feature gate", change: apiServerGates(map[string]bool{"MadeUpFeature": true}),
			want: invalid(`spec.kubernetes.kubeAPIServer.featureGates.MadeUpFeature: Invalid value: "MadeUpFeature": unknown feature gate MadeUpFeature`),
		},
		{
			name: "an unknown kubelet feature gate", change: kubeletGates(map[string]bool{"MadeUpFeature": false}),
			want: invalid(`spec.kubernetes.kubelet.featureGates.MadeUpFeature: Invalid value: "MadeUpFeature": unknown feature gate MadeUpFeature`),
		},
		{
			name: "a gate locked to its default", change: apiServerGates(map[string]bool{"StructuredAuthorizationConfiguration": false}),
			want: invalid(`spec.kubernetes.kubeAPIServer.featureGates.StructuredAuthorizationConfiguration: Forbidden: cannot set feature gate to false, feature is locked to true`),
		},
		{
			name: "a gate the version no longer has", change: on(apiServerGates(map[string]bool{"PodDisruptionConditions": true}), func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.34.1" }),
			want: invalid(`[spec.cloudProfileName: Forbidden: for Kubernetes version >= 1.34, cloudProfileName field is no longer supported, use spec.cloudProfile.name instead, ` +
				`spec.kubernetes.kubeAPIServer.featureGates.PodDisruptionConditions: Forbidden: not supported in Kubernetes version 1.34.1, ` +
				`spec.secretBindingName: Forbidden: for Kubernetes versions >= 1.34, secretBindingName field is no longer supported, use spec.credentialsBindingName instead]`),
		},
		{
			name: "a pool's own kubelet", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Provider.Workers[0].Kubernetes = &gardencorev1beta1.WorkerKubernetes{Kubelet: &gardencorev1beta1.KubeletConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: map[string]bool{"Nope": true}}}}
			},
			want: invalid(`spec.provider.workers[0].kubernetes.kubelet.featureGates.Nope: Invalid value: "Nope": unknown feature gate Nope`),
		},
	})
}

// dnsWith sets spec.dns to the domain and providers.
func dnsWith(domain string, providers ...gardencorev1beta1.DNSProvider) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.DNS = &gardencorev1beta1.DNS{Domain: ptr.To(domain), Providers: providers} //nolint:staticcheck // SA1019: the deprecated providers the manager still writes.
	}
}

// provider is a DNS provider of the type with a secret; primary marks it.
func provider(typ, secret string, primary bool) gardencorev1beta1.DNSProvider {
	p := gardencorev1beta1.DNSProvider{Primary: ptr.To(primary)} //nolint:staticcheck // SA1019: the deprecated primary flag the manager still writes.
	if typ != "" {
		p.Type = ptr.To(typ)
	}
	if secret != "" {
		p.SecretName = ptr.To(secret) //nolint:staticcheck // SA1019: the deprecated secretName the manager still writes.
	}
	return p
}

// TestDNSAndReferencesValidation covers the API validation of spec.dns,
// spec.extensions, spec.resources and spec.tolerations, and ShootDNS.
func TestDNSAndReferencesValidation(t *testing.T) {
	runCases(t, []admissionCase{
		{name: "a custom domain with one primary provider", change: dnsWith(customDomain, provider("aws-route53", dnsSecret, true)), env: landscapeObjects},
		{
			name: "a domain that is no DNS name", change: dnsWith("Kyma_Shoot.example.com", provider("aws-route53", dnsSecret, true)), env: landscapeObjects,
			want: invalid(`spec.dns.domain: Invalid value: "Kyma_Shoot.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`),
		},
		{
			name: "two primary providers", change: dnsWith(customDomain, provider("aws-route53", dnsSecret, true), provider("aws-route53", "other", true)), env: landscapeObjects,
			want: invalid(`spec.dns.providers[1].primary: Forbidden: multiple primary DNS providers are not supported`),
		},
		{
			name: "a provider with a secret but no type", change: dnsWith(customDomain, provider("", dnsSecret, true)), env: landscapeObjects,
			want: invalid(`spec.dns.providers[0].type: Required value: type must be set when credentialsRef is set`),
		},
		{
			name: "a primary provider without a domain", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.DNS = &gardencorev1beta1.DNS{Providers: []gardencorev1beta1.DNSProvider{provider("aws-route53", dnsSecret, true)}} //nolint:staticcheck // SA1019: the deprecated providers under test.
			},
			env:  landscapeObjects,
			want: invalid(`spec.dns.domain: Required value: domain must be set when primary provider type is not set to "unmanaged"`),
		},
		{
			name: "a primary provider under the default domain", change: dnsWith("c-1.kyma.sim.gardener.local", provider("aws-route53", dnsSecret, true)), env: landscapeObjects, domain: "sim.gardener.local",
			want: invalid(`spec.dns.providers[0].primary: Invalid value: true: primary dns provider must not be set when default domain is used`),
		},
		{
			name: "another shoot's default domain", change: dnsWith("c-2.kyma.sim.gardener.local"), domain: "sim.gardener.local",
			want: invalid(`spec.dns.domain: Invalid value: "c-2.kyma.sim.gardener.local": shoot uses a default domain but does not match expected scheme: <shoot-name>.<project-name>.<default-domain> (expected 'c-1.kyma.sim.gardener.local', but got 'c-2.kyma.sim.gardener.local')`),
		},
		{
			name: "a changed primary provider type of a scheduled shoot", env: landscapeObjects,
			old:    on(dnsWith(customDomain, provider("aws-route53", dnsSecret, true)), func(s *gardencorev1beta1.Shoot) { s.Spec.SeedName = ptr.To("aws-eu-central-1") }),
			change: on(dnsWith(customDomain, provider("azure-dns", dnsSecret, true)), func(s *gardencorev1beta1.Shoot) { s.Spec.SeedName = ptr.To("aws-eu-central-1") }),
			want:   invalid(`spec.dns.providers: Forbidden: changing primary provider type is not allowed`),
		},
		{
			name: "an extension listed twice", change: on(withExtension("acl", "", false), withExtension("acl", "", true)),
			want: invalid(`spec.extensions[1].type: Duplicate value: "acl"`),
		},
		{
			name: "a resource of an unsupported kind", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Resources = []gardencorev1beta1.NamedResourceReference{{Name: "x", ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Pod", Name: "x"}}}
			},
			want: invalid(`spec.resources[0].resourceRef: Unsupported value: "/v1, Kind=Pod": supported values: "/v1, Kind=Secret", "/v1, Kind=ConfigMap", "security.gardener.cloud/v1alpha1, Kind=WorkloadIdentity"`),
		},
		{
			name: "two resources of one name", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Resources = []gardencorev1beta1.NamedResourceReference{secretResource("x", "a"), secretResource("x", "b")}
			},
			want: invalid(`spec.resources[1].name: Duplicate value: "x"`),
		},
		{
			name: "a toleration without key", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Tolerations = []gardencorev1beta1.Toleration{{Value: ptr.To("x")}}
			},
			want: invalid(`spec.tolerations[0].key: Required value: cannot be empty`),
		},
		{
			name: "a toleration key twice", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Tolerations = []gardencorev1beta1.Toleration{{Key: "a"}, {Key: "a", Value: ptr.To("b")}}
			},
			want: invalid(`spec.tolerations[1]: Duplicate value: "a=b"`),
		},
	})
}

// TestAccessRestrictionsAndWorkers covers ShootValidator's access
// restriction check, SSH access and the AWS WorkerConfig.
func TestAccessRestrictionsAndWorkers(t *testing.T) {
	euAccess := func(s *gardencorev1beta1.Shoot) {
		s.Spec.AccessRestrictions = []gardencorev1beta1.AccessRestrictionWithOptions{{AccessRestriction: gardencorev1beta1.AccessRestriction{Name: "eu-access-only"}}}
	}
	inUSEast := func(s *gardencorev1beta1.Shoot) {
		s.Spec.Region = "us-east-1"
		s.Spec.Provider.Workers[0].Zones = []string{"us-east-1a"}
		s.Spec.Provider.InfrastructureConfig.Raw = []byte(strings.ReplaceAll(string(s.Spec.Provider.InfrastructureConfig.Raw), "eu-central-1a", "us-east-1a"))
	}
	workerConfig := func(config string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		}
	}
	runCases(t, []admissionCase{
		{name: "EU access in an EU region", change: euAccess},
		{name: "EU access in switzerlandnorth", provider: "azure", change: on(euAccess, func(s *gardencorev1beta1.Shoot) { s.Spec.Region = "switzerlandnorth" })},
		{
			name: "EU access in a region without it", change: on(inUSEast, euAccess),
			want: forbidden(forbiddenShoot + `spec.accessRestrictions[0]: Unsupported value: "eu-access-only"`),
		},
		{
			name: "EU access added on a seed without it", old: func(s *gardencorev1beta1.Shoot) { s.Spec.SeedName = ptr.To("aws-us-east-1") },
			change: on(euAccess, func(s *gardencorev1beta1.Shoot) { s.Spec.SeedName = ptr.To("aws-us-east-1") }),
			want:   forbidden(forbiddenShoot + `spec.accessRestrictions[0]: Forbidden: access restriction "eu-access-only" is not supported by the seed`),
		},
		{name: "SSH access disabled", change: func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.WorkersSettings = &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}}
		}},
		{name: "IMDSv2 required on AWS workers", change: workerConfig(awsWorkerIMDS2)},
	})
}
