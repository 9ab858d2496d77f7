// Package v1alpha1 holds the providerConfig of the shoot-dns-service
// extension, service.dns.extensions.gardener.cloud/v1alpha1 DNSConfig, with
// the package and type names of gardener-extension-shoot-dns-service
// (pkg/apis/service/v1alpha1), so that a decoding error reads as the
// extension's webhooks report it. AddToScheme registers the one type as both
// the served and the internal version, which the webhooks decode into.
package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the extension's configuration.
const GroupName = "service.dns.extensions.gardener.cloud"

// SchemeGroupVersion is the version of DNSConfig the extension serves.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// DNSConfig is the providerConfig of the shoot-dns-service extension.
type DNSConfig struct {
	metav1.TypeMeta `json:",inline"`
	// DNSProviderReplication enables the replication of DNSProviders from
	// the shoot cluster.
	DNSProviderReplication *DNSProviderReplication `json:"dnsProviderReplication,omitempty"`
	// Providers are additional DNS providers for the shoot.
	Providers []DNSProvider `json:"providers,omitempty"`
	// SyncProvidersFromShootSpecDNS makes the extension's admission copy
	// spec.dns.providers into Providers.
	SyncProvidersFromShootSpecDNS *bool `json:"syncProvidersFromShootSpecDNS,omitempty"`
}

// DNSProviderReplication enables the replication of DNSProviders.
type DNSProviderReplication struct {
	// Enabled switches the replication on.
	Enabled bool `json:"enabled"`
}

// DNSProvider is one DNS provider of the extension.
type DNSProvider struct {
	// Domains are the domains the provider includes and excludes.
	Domains *DNSIncludeExclude `json:"domains,omitempty"`
	// SecretName names the spec.resources entry with the credentials.
	SecretName *string `json:"secretName,omitempty"`
	// Credentials names the spec.resources entry with the credentials, a
	// Secret or a WorkloadIdentity; the alternative to SecretName.
	Credentials *string `json:"credentials,omitempty"`
	// Type is the DNS provider type.
	Type *string `json:"type,omitempty"`
	// Zones are the hosted zones the provider includes and excludes.
	Zones *DNSIncludeExclude `json:"zones,omitempty"`
}

// DNSIncludeExclude lists what is included and excluded.
type DNSIncludeExclude struct {
	// Include are the included names.
	Include []string `json:"include,omitempty"`
	// Exclude are the excluded names.
	Exclude []string `json:"exclude,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (c *DNSConfig) DeepCopyObject() runtime.Object {
	out := &DNSConfig{}
	data, err := json.Marshal(c)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		panic(err) // A DNSConfig always round-trips.
	}
	return out
}

// AddToScheme registers DNSConfig as the served version and as the internal
// version of the group.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypeWithName(SchemeGroupVersion.WithKind("DNSConfig"), &DNSConfig{})
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}.WithKind("DNSConfig"), &DNSConfig{})
	return nil
}
