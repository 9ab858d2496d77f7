package gardener

import (
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Extensions the render lists on a Shoot.
const (
	// ExtensionNetworkingFilter is the Gardener extension that implements the egress filter and,
	// by blackholing, the ingress filter.
	ExtensionNetworkingFilter = "shoot-networking-filter"
	// ExtensionOIDCService is the Gardener extension that serves OpenIDConnect resources in the
	// shoot, through which the additional OIDC providers are registered.
	ExtensionOIDCService = "shoot-oidc-service"
	// ExtensionNvidiaOpenshell is the Gardener extension a Runtime enables with
	// enableNvidiaOpenshell.
	ExtensionNvidiaOpenshell = "shoot-nvidia-openshell"
	// ExtensionRegistryCache is the Gardener extension that serves the Runtime's image registry
	// caches.
	ExtensionRegistryCache = "registry-cache"
	// ExtensionCert is the extension that issues certificates in the shoot.
	ExtensionCert = "shoot-cert-service"
)

// extensions lists the Gardener extensions the Shoot configures: always the networking filter,
// the OIDC service, DNS and certificates; the landscape's audit logging and ACL; the Runtime's
// GPU and registry cache extensions. An extension the manager stops listing is removed by the
// next server-side apply, as it owns the entry.
func (b *shootBuilder) extensions(dns *gardencorev1beta1.DNS, version string, tenant *AuditLogTenant) ([]gardencorev1beta1.Extension, error) {
	rt := b.rt
	out := []gardencorev1beta1.Extension{
		networkingFilter(rt.Spec.Security.Networking.Filter),
		{Type: ExtensionOIDCService, Disabled: ptr.To(false)},
		dnsExtension(dns, version),
		certExtension(),
	}
	if tenant != nil {
		out = append(out, auditLogExtension(tenant))
	}
	if acl := b.aclExtension(); acl != nil {
		out = append(out, *acl)
	}
	if ptr.Deref(rt.Spec.Shoot.EnableNvidiaOpenshell, false) {
		out = append(out, gardencorev1beta1.Extension{Type: ExtensionNvidiaOpenshell, Disabled: ptr.To(false)})
	}
	if caches := rt.Spec.ImageRegistryCache; len(caches) > 0 {
		out = append(out, registryCacheExtension(caches))
	}
	return b.adoptExtensions(out)
}

// networkingFilter switches the shoot-networking-filter extension: always listed, disabled unless
// the Runtime enables the egress filter. Listing it either way makes the manager own the switch
// under server-side apply, so turning the filter off is an explicit Disabled=true rather than a
// field that disappears. The ingress filter is the extension's blackholing, also always set
// explicitly so that the extension's landscape-wide default never decides it; it takes effect
// only while the filter is enabled.
func networkingFilter(in infrav1.Filter) gardencorev1beta1.Extension {
	ingress := in.Ingress != nil && in.Ingress.Enabled
	return gardencorev1beta1.Extension{
		Type:     ExtensionNetworkingFilter,
		Disabled: ptr.To(!in.Egress.Enabled),
		ProviderConfig: rawJSON(networkingFilterConfig{
			APIVersion:   "shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1",
			Kind:         "Configuration",
			EgressFilter: egressFilterConfig{BlackholingEnabled: ingress},
		}),
	}
}

// networkingFilterConfig is the part of the networking filter's providerConfig the manager sets.
type networkingFilterConfig struct {
	APIVersion   string             `json:"apiVersion"`
	Kind         string             `json:"kind"`
	EgressFilter egressFilterConfig `json:"egressFilter"`
}

type egressFilterConfig struct {
	BlackholingEnabled bool `json:"blackholingEnabled"`
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

type enabled struct {
	Enabled bool `json:"enabled"`
}

// registryCacheExtension configures Gardener's registry-cache extension with one cache per
// configured registry. The Runtime's cache config has the extension's own field names.
func registryCacheExtension(in []infrav1.ImageRegistryCache) gardencorev1beta1.Extension {
	caches := make([]infrav1.RegistryCacheConfigSpec, 0, len(in))
	for _, c := range in {
		caches = append(caches, *c.Config.DeepCopy())
	}
	return gardencorev1beta1.Extension{
		Type:     ExtensionRegistryCache,
		Disabled: ptr.To(false),
		ProviderConfig: rawJSON(registryConfig{
			APIVersion: "registry.extensions.gardener.cloud/v1alpha3",
			Kind:       "RegistryConfig",
			Caches:     caches,
		}),
	}
}

// registryConfig is the registry-cache extension's providerConfig.
type registryConfig struct {
	APIVersion string                            `json:"apiVersion"`
	Kind       string                            `json:"kind"`
	Caches     []infrav1.RegistryCacheConfigSpec `json:"caches"`
}

// checkRegistryCaches refuses a registry cache with credentials. Upstream names them
// reg-cache-<uid> in the shoot and copies the Secret from the runtime cluster into the project with
// its registry cache config controller, which this manager does not have; a name passed through as
// written would name a resource of the shoot it does not own, such as the landscape's DNS or audit
// log credentials, or none at all.
func (b *shootBuilder) checkRegistryCaches() error {
	for i, c := range b.rt.Spec.ImageRegistryCache {
		if name := deref(c.Config.SecretReferenceName); name != "" {
			path := fmt.Sprintf("spec.imageRegistryCache[%d].config.secretReferenceName", i)
			return refused(b.rt, path, fmt.Sprintf("registry cache credentials (%q) are not supported: upstream copies them from the runtime cluster with its registry cache config controller, which this manager does not have", name))
		}
	}
	return nil
}
