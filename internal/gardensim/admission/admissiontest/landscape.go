package admissiontest

import (
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Names of the objects a landscape's shoot references.
const (
	// DNSSecret holds the credentials of the shoot's DNS provider.
	DNSSecret = "dns-secret"
	// AuditLogSecret holds the credentials of the audit log tenant.
	AuditLogSecret = "tenant-secret"
	// AuditPolicyConfigMap holds the audit policy under the key policy.
	AuditPolicyConfigMap = "audit-policy"
	// ValidAuditPolicy is an audit policy kube-apiserver accepts.
	ValidAuditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"
	// ACLConfig is a providerConfig the acl extension accepts.
	ACLConfig = `{"rule":{"action":"ALLOW","cidrs":["10.0.0.0/8","192.168.1.1/32"],"type":"remote_ip"}}`
	// DNSServiceConfig is a providerConfig of shoot-dns-service that syncs
	// the providers from spec.dns.
	DNSServiceConfig = `{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","dnsProviderReplication":{"enabled":true},"kind":"DNSConfig","syncProvidersFromShootSpecDNS":true}`
	// CertServiceConfig is a providerConfig of shoot-cert-service.
	CertServiceConfig = `{"apiVersion":"service.cert.extensions.gardener.cloud/v1alpha1","kind":"CertConfig","shootIssuers":{"enabled":true}}`
	// AWSWorkerConfig requires IMDSv2 on an AWS pool.
	AWSWorkerConfig = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","instanceMetadataOptions":{"httpPutResponseHopLimit":2,"httpTokens":"required"},"kind":"WorkerConfig"}`
	// DomainPrefix is the landscape's custom DNS domain; shoots get
	// <shoot>.<prefix>.
	DomainPrefix = "kyma.example.com"
)

// Extension is an entry of spec.extensions; config is its providerConfig,
// none if empty.
func Extension(typ, config string, disabled bool) gardencorev1beta1.Extension {
	e := gardencorev1beta1.Extension{Type: typ}
	if config != "" {
		e.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
	}
	if disabled {
		e.Disabled = ptr.To(true)
	}
	return e
}

// SecretResource is an entry of spec.resources naming a Secret.
func SecretResource(name, secret string) gardencorev1beta1.NamedResourceReference {
	return gardencorev1beta1.NamedResourceReference{Name: name, ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret}}
}

// WithLandscape gives a valid aws shoot what a landscape's configuration
// adds, as Infrastructure Manager writes it: every extension type it writes
// (two of them disabled), the custom DNS domain <shoot>.<DomainPrefix> with
// one primary aws-route53 provider whose secret spec.resources lists too,
// the audit log secret and policy, the API server's token bounds, feature
// gates and runtime config, the kubelet's feature gates, a maintenance
// window with auto-update, EU access, a toleration, no SSH and IMDSv2 on the
// workers. The shoot needs LandscapeObjects in its namespace.
func WithLandscape(s *gardencorev1beta1.Shoot) {
	domain := s.Name + "." + DomainPrefix
	s.Spec.Extensions = []gardencorev1beta1.Extension{
		Extension("shoot-networking-filter", "", true),
		Extension("shoot-oidc-service", "", false),
		Extension("shoot-dns-service", DNSServiceConfig, false),
		Extension("shoot-cert-service", CertServiceConfig, false),
		Extension("shoot-auditlog-service", "", false),
		Extension("acl", ACLConfig, false),
		Extension("registry-cache", "", true),
		Extension("shoot-nvidia-openshell", "", false),
	}
	s.Spec.DNS = &gardencorev1beta1.DNS{
		Domain: ptr.To(domain),
		Providers: []gardencorev1beta1.DNSProvider{{ //nolint:staticcheck // SA1019: the deprecated providers the manager still writes.
			Type: ptr.To("aws-route53"), Primary: ptr.To(true), SecretName: ptr.To(DNSSecret),
			Domains: &gardencorev1beta1.DNSIncludeExclude{Include: []string{domain}},
		}},
	}
	s.Spec.Resources = []gardencorev1beta1.NamedResourceReference{SecretResource(DNSSecret, DNSSecret), SecretResource("auditlog-credentials", AuditLogSecret)}
	s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{
		KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: map[string]bool{"ClusterTrustBundle": true}},
		RuntimeConfig:    map[string]bool{"certificates.k8s.io/v1beta1/clustertrustbundles": true},
		AuditConfig:      &gardencorev1beta1.AuditConfig{AuditPolicy: &gardencorev1beta1.AuditPolicy{ConfigMapRef: &corev1.ObjectReference{Name: AuditPolicyConfigMap}}},
		ServiceAccountConfig: &gardencorev1beta1.ServiceAccountConfig{
			ExtendTokenExpiration: ptr.To(false), MaxTokenExpiration: &metav1.Duration{Duration: 720 * time.Hour},
		},
	}
	s.Spec.Kubernetes.Kubelet = &gardencorev1beta1.KubeletConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: map[string]bool{"ClusterTrustBundleProjection": true}}}
	s.Spec.Maintenance = &gardencorev1beta1.Maintenance{
		TimeWindow: &gardencorev1beta1.MaintenanceTimeWindow{Begin: "200000+0000", End: "000000+0000"},
		AutoUpdate: &gardencorev1beta1.MaintenanceAutoUpdate{KubernetesVersion: true, MachineImageVersion: ptr.To(true)},
	}
	s.Spec.AccessRestrictions = []gardencorev1beta1.AccessRestrictionWithOptions{{
		AccessRestriction: gardencorev1beta1.AccessRestriction{Name: "eu-access-only"},
		Options: map[string]string{
			"support.gardener.cloud/eu-access-for-cluster-addons": "true",
			"support.gardener.cloud/eu-access-for-cluster-nodes":  "true",
		},
	}}
	s.Spec.Tolerations = []gardencorev1beta1.Toleration{{Key: "kyma.project.io/eu-access", Value: ptr.To("true")}}
	s.Spec.Provider.WorkersSettings = &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}}
	s.Spec.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(AWSWorkerConfig)}
}

// LandscapeObjects are the Secrets and the audit policy ConfigMap a shoot
// WithLandscape references, in namespace.
func LandscapeObjects(namespace string) (secrets []*corev1.Secret, policy *corev1.ConfigMap) {
	// The DNS provider's credentials are an aws-route53 secret, as the aws
	// extension checks them.
	secrets = append(secrets,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: DNSSecret, Namespace: namespace}, Data: map[string][]byte{
			"accessKeyID": []byte("AKIAIOSFODNN7EXAMPLE"), "secretAccessKey": []byte("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
		}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: AuditLogSecret, Namespace: namespace}})
	policy = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: AuditPolicyConfigMap, Namespace: namespace}, Data: map[string]string{"policy": ValidAuditPolicy}}
	return secrets, policy
}
