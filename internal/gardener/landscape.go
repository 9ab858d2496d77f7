package gardener

import (
	"errors"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Extensions and names the landscape configuration adds to a Shoot.
const (
	// ExtensionDNS is the extension that manages the shoot's DNS records with the landscape's
	// DNS provider.
	ExtensionDNS = "shoot-dns-service"
	// ExtensionCert is the extension that issues certificates in the shoot.
	ExtensionCert = "shoot-cert-service"
	// ExtensionAuditLog is the extension that ships the API server's audit log to the shared
	// audit log service.
	ExtensionAuditLog = "shoot-auditlog-service"
	// AuditLogCredentialsResource is the name under which the Shoot references the audit log
	// tenant's credentials Secret.
	AuditLogCredentialsResource = "auditlog-credentials"
	// AccessRestrictionEUAccess keeps a shoot's nodes and add-ons operated from the EU only.
	AccessRestrictionEUAccess = "eu-access-only"
	// ReasonAuditLogError is the reason when a runtime's region has no audit log tenant while
	// audit logging is mandatory; upstream's condition reason.
	ReasonAuditLogError = "AuditLogError"
)

// Gardener's bounds of a service account token's maximum expiration: it refuses shorter ones
// and longer ones.
const (
	MinTokenExpiration = 30 * 24 * time.Hour
	MaxTokenExpiration = 90 * 24 * time.Hour
)

// euAccessPlatformRegions are the platform regions whose runtimes are operated from the EU only.
var euAccessPlatformRegions = []string{"cf-eu11", "cf-ch20"}

// aclProviders are the provider types whose load balancers preserve the client address, which
// the ACL extension needs.
var aclProviders = []string{"aws", "azure"}

// ErrNoAuditLogTenant means audit logging is mandatory and the runtime's provider and region
// have no tenant.
var ErrNoAuditLogTenant = errors.New("no audit log tenant")

// DNS is the landscape's DNS provider; nil in ConvertOptions means Gardener's own DNS.
type DNS struct {
	// SecretName is the Secret with the provider's credentials in the project namespace.
	SecretName string
	// DomainPrefix is the domain below which each shoot gets <shoot>.<prefix>.
	DomainPrefix string
	// ProviderType is Gardener's DNS provider type.
	ProviderType string
}

// AuditLog is the shared audit logging of the landscape.
type AuditLog struct {
	// PolicyConfigMapName is the audit policy ConfigMap in the project namespace.
	PolicyConfigMapName string
	// Tenants holds the tenant of each provider type and region.
	Tenants map[string]map[string]AuditLogTenant
	// Mandatory refuses to render a shoot whose provider and region have no tenant.
	Mandatory bool
}

// AuditLogTenant is one tenant of the shared audit log service.
type AuditLogTenant struct {
	TenantID   string
	ServiceURL string
	// SecretName is the Secret with the tenant's credentials in the project namespace.
	SecretName string
}

// ACL is what every API server access list includes besides the Runtime's own networks, so
// that neither the operators nor the control plane (this manager included) lock themselves out.
type ACL struct {
	// OperatorCIDRs are the operators' networks.
	OperatorCIDRs []string
	// ControlPlaneCIDR is the control plane's external NAT address.
	ControlPlaneCIDR string
}

// tenant returns the audit log tenant of rt's provider and region; nil with no audit logging
// configured, or no tenant when it is optional.
func (a *AuditLog) tenant(rt *infrav1.Runtime) (*AuditLogTenant, error) {
	if a == nil {
		return nil, nil
	}
	provider, region := rt.Spec.Shoot.Provider.Type, rt.Spec.Shoot.Region
	t, ok := a.Tenants[provider][region]
	switch {
	case ok:
		return &t, nil
	case a.Mandatory:
		return nil, retry.Terminal(ReasonAuditLogError, fmt.Errorf(
			"audit logging is mandatory and the landscape has no audit log tenant for provider %s in region %s (spec.shoot.region): %w",
			provider, region, ErrNoAuditLogTenant))
	}
	return nil, nil
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

type enabled struct {
	Enabled bool `json:"enabled"`
}

// certExtension configures shoot-cert-service with issuers in the shoot, so runtime workloads
// can request certificates from their own issuers.
func certExtension() gardencorev1beta1.Extension {
	return gardencorev1beta1.Extension{
		Type: ExtensionCert,
		ProviderConfig: rawJSON(certConfig{
			APIVersion:   "service.cert.extensions.gardener.cloud/v1alpha1",
			Kind:         "CertConfig",
			ShootIssuers: enabled{Enabled: true},
		}),
	}
}

// certConfig is the shoot-cert-service extension's providerConfig.
type certConfig struct {
	APIVersion   string  `json:"apiVersion"`
	Kind         string  `json:"kind"`
	ShootIssuers enabled `json:"shootIssuers"`
}

// auditLogExtension sends the API server's audit log to the tenant, with the credentials the
// Shoot references as AuditLogCredentialsResource.
func auditLogExtension(t *AuditLogTenant) gardencorev1beta1.Extension {
	return gardencorev1beta1.Extension{
		Type: ExtensionAuditLog,
		ProviderConfig: rawJSON(auditLogConfig{
			APIVersion:          "service.auditlog.extensions.gardener.cloud/v1alpha1",
			Kind:                "AuditlogConfig",
			Type:                "standard",
			TenantID:            t.TenantID,
			ServiceURL:          t.ServiceURL,
			SecretReferenceName: AuditLogCredentialsResource,
		}),
	}
}

// auditLogConfig is the shoot-auditlog-service extension's providerConfig.
type auditLogConfig struct {
	APIVersion          string `json:"apiVersion"`
	Kind                string `json:"kind"`
	Type                string `json:"type"`
	TenantID            string `json:"tenantID"`
	ServiceURL          string `json:"serviceURL"`
	SecretReferenceName string `json:"secretReferenceName"`
}

// resources lists the Secrets the Shoot's extensions read: the DNS provider's and the audit log
// tenant's credentials.
func resources(dns *gardencorev1beta1.DNS, tenant *AuditLogTenant) []gardencorev1beta1.NamedResourceReference {
	var out []gardencorev1beta1.NamedResourceReference
	if p, secret := dnsProvider(dns); p != nil {
		out = append(out, secretReference(secret, secret))
	}
	if tenant != nil {
		out = append(out, secretReference(AuditLogCredentialsResource, tenant.SecretName))
	}
	return out
}

func secretReference(name, secret string) gardencorev1beta1.NamedResourceReference {
	return gardencorev1beta1.NamedResourceReference{
		Name:        name,
		ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret},
	}
}

// kubeAPIServer adds the landscape's API server settings: the audit policy when audit logging
// is on, the bounded service account token expiration, feature gates and the runtime config
// of the APIs the shoot's Kubernetes version serves.
func (b *shootBuilder) kubeAPIServer(api *gardencorev1beta1.KubeAPIServerConfig, version string, tenant *AuditLogTenant) {
	if tenant != nil {
		api.AuditConfig = &gardencorev1beta1.AuditConfig{AuditPolicy: &gardencorev1beta1.AuditPolicy{
			ConfigMapRef: &corev1.ObjectReference{Name: b.opts.AuditLog.PolicyConfigMapName},
		}}
	}
	api.ServiceAccountConfig = &gardencorev1beta1.ServiceAccountConfig{
		ExtendTokenExpiration: ptr.To(false),
		MaxTokenExpiration:    &metav1.Duration{Duration: TokenExpiration(b.opts.MaxTokenExpiration)},
	}
	api.FeatureGates = cloneNonEmpty(b.opts.KubeAPIServerFeatureGates)
	api.RuntimeConfig = servedRuntimeConfig(b.opts.KubeAPIServerRuntimeConfig, version)
}

// TokenExpiration clamps d into Gardener's bounds; zero means the shortest.
func TokenExpiration(d time.Duration) time.Duration {
	return min(max(d, MinTokenExpiration), MaxTokenExpiration)
}

// maintenance lets Gardener's maintenance update versions when the landscape allows it, and
// gives production runtimes their region's maintenance window. A shoot keeps the window it has
// when the landscape names none, so a re-apply never moves it.
func (b *shootBuilder) maintenance() *gardencorev1beta1.Maintenance {
	out := &gardencorev1beta1.Maintenance{
		AutoUpdate: &gardencorev1beta1.MaintenanceAutoUpdate{
			KubernetesVersion:   b.opts.KubernetesAutoUpdate,
			MachineImageVersion: ptr.To(b.opts.MachineImageAutoUpdate),
		},
	}
	if w, ok := b.opts.MaintenanceWindows[b.rt.Spec.Shoot.Region]; ok && b.rt.Spec.Shoot.Purpose == string(gardencorev1beta1.ShootPurposeProduction) {
		out.TimeWindow = &w
	} else if b.current != nil && b.current.Spec.Maintenance != nil && b.current.Spec.Maintenance.TimeWindow != nil {
		out.TimeWindow = b.current.Spec.Maintenance.TimeWindow.DeepCopy()
	}
	return out
}

// accessRestrictions keeps the runtimes of the EU platform regions operated from the EU only.
func accessRestrictions(rt *infrav1.Runtime) []gardencorev1beta1.AccessRestrictionWithOptions {
	if !slices.Contains(euAccessPlatformRegions, rt.Spec.Shoot.PlatformRegion) {
		return nil
	}
	return []gardencorev1beta1.AccessRestrictionWithOptions{{
		AccessRestriction: gardencorev1beta1.AccessRestriction{Name: AccessRestrictionEUAccess},
		Options: map[string]string{
			"support.gardener.cloud/eu-access-for-cluster-addons": "true",
			"support.gardener.cloud/eu-access-for-cluster-nodes":  "true",
		},
	}}
}

// tolerations returns the tolerations the landscape gives shoots of rt's region.
func (b *shootBuilder) tolerations() []gardencorev1beta1.Toleration {
	return slices.Clone(b.opts.Tolerations[b.rt.Spec.Shoot.Region])
}

// awsWorkerConfig is the AWS WorkerConfig that requires IMDSv2 session tokens.
func awsWorkerConfig() awsWorker {
	return awsWorker{
		APIVersion: "aws.provider.extensions.gardener.cloud/v1alpha1",
		Kind:       "WorkerConfig",
		InstanceMetadataOptions: awsInstanceMetadata{
			HTTPTokens:              "required",
			HTTPPutResponseHopLimit: 2,
		},
	}
}

type awsWorker struct {
	APIVersion              string              `json:"apiVersion"`
	Kind                    string              `json:"kind"`
	InstanceMetadataOptions awsInstanceMetadata `json:"instanceMetadataOptions"`
}

type awsInstanceMetadata struct {
	HTTPTokens              string `json:"httpTokens"`
	HTTPPutResponseHopLimit int64  `json:"httpPutResponseHopLimit"`
}

// aclExtension restricts the API server to the Runtime's networks plus the operators' and the
// control plane's, on the providers that support it, when the landscape enables ACLs. A Runtime
// without networks gets the extension explicitly disabled, so removing the ACL lifts it. With
// ACLs off nothing is listed.
func (b *shootBuilder) aclExtension() *gardencorev1beta1.Extension {
	acl := b.opts.ACL
	if acl == nil || !slices.Contains(aclProviders, b.rt.Spec.Shoot.Provider.Type) {
		return nil
	}
	if !NeedsACL(b.rt) {
		return &gardencorev1beta1.Extension{Type: ExtensionACL, Disabled: ptr.To(true)}
	}
	var cidrs []string
	for _, c := range slices.Concat(b.rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL.AllowedCIDRs, acl.OperatorCIDRs, []string{acl.ControlPlaneCIDR}) {
		if c != "" && !slices.Contains(cidrs, c) {
			cidrs = append(cidrs, c)
		}
	}
	return &gardencorev1beta1.Extension{
		Type:     ExtensionACL,
		Disabled: ptr.To(false),
		ProviderConfig: rawJSON(aclConfig{Rule: aclRule{
			Action: "ALLOW",
			Type:   "remote_ip",
			CIDRs:  cidrs,
		}}),
	}
}

// ACLProviders lists the provider types whose shoots can restrict their API server.
func ACLProviders() []string { return slices.Clone(aclProviders) }

// NeedsACL reports whether rt restricts its API server to its own networks, on a provider that
// supports the ACL extension: the runtimes whose shoot depends on the landscape's ACL addresses.
func NeedsACL(rt *infrav1.Runtime) bool {
	acl := rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL
	return acl != nil && len(acl.AllowedCIDRs) > 0 && slices.Contains(aclProviders, rt.Spec.Shoot.Provider.Type)
}

// cloneNonEmpty returns a copy of m, nil when it is empty.
func cloneNonEmpty[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
