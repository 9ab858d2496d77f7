package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/utils/ptr"
)

// ExtensionDNS is the extension that manages the shoot's DNS records with the landscape's
// DNS provider.
const ExtensionDNS = "shoot-dns-service"

// DNS is the landscape's DNS provider; nil in RenderOptions means Gardener's own DNS.
type DNS struct {
	// SecretName is the Secret with the provider's credentials in the project namespace.
	SecretName string
	// DomainPrefix is the domain below which each shoot gets <shoot>.<prefix>.
	DomainPrefix string
	// ProviderType is Gardener's DNS provider type.
	ProviderType string
}

// dnsCredentialsRefVersion is the first Kubernetes version whose shoots must name their DNS
// credentials by credentialsRef: Gardener forbids spec.dns.providers[].secretName from it on.
const dnsCredentialsRefVersion = "1.35.0"

// dns sets the custom domain <shoot>.<prefix> with the landscape's provider as primary, and
// references the provider's Secret so the extension can read it. A shoot that exists keeps the
// DNS it has: Gardener never changes a shoot's domain. Either way the credentials are named as
// Gardener requires for the shoot's Kubernetes version (see dnsCredentials).
func (b *shootBuilder) dns(spec *gardencorev1beta1.ShootSpec) {
	version := spec.Kubernetes.Version
	if b.current != nil {
		if b.current.Spec.DNS != nil {
			spec.DNS = b.current.Spec.DNS.DeepCopy()
			dnsCredentials(spec.DNS, version)
		}
		return
	}
	d := b.opts.DNS
	if d == nil {
		return
	}
	domain := b.rt.Spec.Shoot.Name + "." + d.DomainPrefix
	spec.DNS = &gardencorev1beta1.DNS{
		Domain: &domain,
		Providers: []gardencorev1beta1.DNSProvider{{ //nolint:staticcheck // SA1019: the primary provider in spec.dns is how Gardener still takes a custom domain, and what upstream's shoots carry.
			Domains:    &gardencorev1beta1.DNSIncludeExclude{Include: []string{domain}},
			Primary:    ptr.To(true),
			SecretName: ptr.To(d.SecretName),
			Type:       ptr.To(d.ProviderType),
		}},
	}
	dnsCredentials(spec.DNS, version)
}

// usesCredentialsRef reports whether a shoot of this Kubernetes version names its DNS
// credentials by credentialsRef only. An empty version is Gardener's default, the newest.
func usesCredentialsRef(version string) bool {
	return version == "" || !versionLess(version, dnsCredentialsRefVersion)
}

// dnsCredentials names each provider's Secret as Gardener requires: below Kubernetes 1.35 by
// secretName (Gardener adds the credentialsRef itself), from 1.35 on by credentialsRef only.
func dnsCredentials(dns *gardencorev1beta1.DNS, version string) {
	if !usesCredentialsRef(version) {
		return
	}
	providers := dns.Providers //nolint:staticcheck // SA1019: as in dns above.
	for i := range providers {
		p := &providers[i]
		name := p.SecretName //nolint:staticcheck // SA1019: the field Gardener forbids from 1.35 on, moved to credentialsRef.
		if name == nil {
			continue
		}
		if p.CredentialsRef == nil {
			p.CredentialsRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: *name}
		}
		p.SecretName = nil //nolint:staticcheck // SA1019: as above.
	}
}

// dnsProvider returns the shoot's primary DNS provider and the name of its Secret, or nil.
func dnsProvider(dns *gardencorev1beta1.DNS) (*gardencorev1beta1.DNSProvider, string) {
	if dns == nil {
		return nil, ""
	}
	providers := dns.Providers //nolint:staticcheck // SA1019: as in dns above.
	for i := range providers {
		p := &providers[i]
		if !ptr.Deref(p.Primary, false) { //nolint:staticcheck // SA1019: as in dns above.
			continue
		}
		if name := ptr.Deref(p.SecretName, ""); name != "" { //nolint:staticcheck // SA1019: as in dns above.
			return p, name
		}
		if ref := p.CredentialsRef; ref != nil && ref.APIVersion == "v1" && ref.Kind == "Secret" && ref.Name != "" {
			return p, ref.Name
		}
	}
	return nil, ""
}

// dnsExtension configures shoot-dns-service: with the shoot's primary provider replicated into
// the shoot when it has one, and in any case synchronised from spec.dns. The provider names its
// credentials as the extension takes them for the shoot's Kubernetes version: by secretName
// below 1.35, by credentials (the spec.resources entry) from 1.35 on.
func dnsExtension(dns *gardencorev1beta1.DNS, version string) gardencorev1beta1.Extension {
	cfg := dnsConfig{
		APIVersion:                    "service.dns.extensions.gardener.cloud/v1alpha1",
		Kind:                          "DNSConfig",
		SyncProvidersFromShootSpecDNS: true,
	}
	if p, secret := dnsProvider(dns); p != nil {
		cfg.DNSProviderReplication = &enabled{Enabled: true}
		provider := dnsConfigProvider{
			Domains: p.Domains.DeepCopy(), //nolint:staticcheck // SA1019: as in dns above.
			Type:    ptr.Deref(p.Type, ""),
		}
		if usesCredentialsRef(version) {
			provider.Credentials = secret
		} else {
			provider.SecretName = secret
		}
		cfg.Providers = []dnsConfigProvider{provider}
	}
	return gardencorev1beta1.Extension{Type: ExtensionDNS, ProviderConfig: rawJSON(cfg)}
}

// dnsConfig is the shoot-dns-service extension's providerConfig.
type dnsConfig struct {
	APIVersion                    string              `json:"apiVersion"`
	Kind                          string              `json:"kind"`
	DNSProviderReplication        *enabled            `json:"dnsProviderReplication,omitempty"`
	Providers                     []dnsConfigProvider `json:"providers,omitempty"`
	SyncProvidersFromShootSpecDNS bool                `json:"syncProvidersFromShootSpecDNS"`
}

type dnsConfigProvider struct {
	Domains     *gardencorev1beta1.DNSIncludeExclude `json:"domains,omitempty"`
	SecretName  string                               `json:"secretName,omitempty"`
	Credentials string                               `json:"credentials,omitempty"`
	Type        string                               `json:"type"`
}
