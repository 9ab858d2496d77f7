package admission_test

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
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

// TestAccessRestrictionsAndWorkers covers shoots with access restrictions and
// SSH access disabled, and the AWS WorkerConfig.
func TestAccessRestrictionsAndWorkers(t *testing.T) {
	euAccess := func(s *gardencorev1beta1.Shoot) {
		s.Spec.AccessRestrictions = []gardencorev1beta1.AccessRestrictionWithOptions{{AccessRestriction: gardencorev1beta1.AccessRestriction{Name: "eu-access-only"}}}
	}
	workerConfig := func(config string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		}
	}
	runCases(t, []admissionCase{
		{name: "EU access in an EU region", change: euAccess},
		{name: "EU access in switzerlandnorth", provider: "azure", change: on(euAccess, func(s *gardencorev1beta1.Shoot) { s.Spec.Region = "switzerlandnorth" })},
		{name: "SSH access disabled", change: func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.WorkersSettings = &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}}
		}},
		{name: "IMDSv2 required on AWS workers", change: workerConfig(awsWorkerIMDS2)},
		{
			name:   "an instance metadata hop limit out of range",
			change: workerConfig(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","instanceMetadataOptions":{"httpPutResponseHopLimit":65,"httpTokens":"always"},"kind":"WorkerConfig"}`),
			want: forbidden(awsDenied + `[spec.provider.workers[0].providerConfig.instanceMetadataOptions.httpPutResponseHopLimit: Invalid value: 65: only values between 1 and 64 are allowed, ` +
				`spec.provider.workers[0].providerConfig.instanceMetadataOptions.httpTokens: Invalid value: "always": only the following values are allowed: [required optional]]`),
		},
	})
}
