// Package landscape reads a landscape's converter configuration: the one JSON file (with the
// same shape as upstream Kyma Infrastructure Manager's converter_config.json) in which a
// landscape's operators set, once, what every shoot of the landscape gets besides what its
// Runtime asks for: Kubernetes defaults and auto-update, the operators' OIDC provider, DNS,
// audit logging, maintenance windows, tolerations and the API server access list. The files it
// names (audit-log tenants, maintenance windows) are read with it. Load validates everything at
// start-up and names the field and file of every error, so a wrong landscape stops the manager
// before it writes a single shoot. Settings (options.go) are the landscape's flags. They name
// the file; without one, they give the project and the render defaults.
package landscape

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// Config is the converter configuration file.
type Config struct {
	// Converter holds what the render of a Runtime into a Shoot needs.
	Converter ConverterConfig `json:"converter"`
	// Cluster holds what the runtime clusters get.
	Cluster ClusterConfig `json:"cluster"`
}

// ClusterConfig holds the settings of the runtime clusters themselves.
type ClusterConfig struct {
	// DefaultSharedIASTenant is the shared identity tenant of runtimes that bring none.
	DefaultSharedIASTenant *OIDCProvider `json:"defaultSharedIASTenant,omitempty"`
}

// ConverterConfig is the part of the file the render of a Runtime into a Shoot reads.
type ConverterConfig struct {
	Kubernetes        KubernetesConfig        `json:"kubernetes"`
	DNS               DNSConfig               `json:"dns"`
	Provider          ProviderConfig          `json:"provider"`
	MachineImage      MachineImageConfig      `json:"machineImage"`
	Gardener          GardenerConfig          `json:"gardener"`
	AuditLog          AuditLogConfig          `json:"auditLogging"`
	MaintenanceWindow MaintenanceWindowConfig `json:"maintenanceWindow"`
	// Tolerations lists, per region, the tolerations its shoots get.
	Tolerations map[string][]gardencorev1beta1.Toleration `json:"tolerations,omitempty"`
	Networking  NetworkingConfig                          `json:"networking"`
}

// KubernetesConfig holds the Kubernetes defaults of the landscape.
type KubernetesConfig struct {
	// DefaultVersion is the Kubernetes version of runtimes that name none. Required.
	DefaultVersion string `json:"defaultVersion"`
	// EnableKubernetesVersionAutoUpdate lets Gardener's maintenance update patch versions.
	EnableKubernetesVersionAutoUpdate bool `json:"enableKubernetesVersionAutoUpdate"`
	// EnableMachineImageVersionAutoUpdate lets Gardener's maintenance update machine images.
	EnableMachineImageVersionAutoUpdate bool `json:"enableMachineImageVersionAutoUpdate"`
	// DefaultOperatorOidc is the operators' OIDC provider, the main provider of runtimes that
	// name none. Required.
	DefaultOperatorOidc *OIDCProvider `json:"defaultOperatorOidc,omitempty"`
	// DefaultSharedIASTenant is read from older files, which put it here.
	DefaultSharedIASTenant *OIDCProvider       `json:"defaultSharedIASTenant,omitempty"`
	KubeAPIServer          KubeAPIServerConfig `json:"kubeApiServer"`
	Kubelet                KubeletConfig       `json:"kubelet"`
}

// OIDCProvider is an OpenID Connect provider as the file names its fields.
type OIDCProvider struct {
	ClientID       string   `json:"clientID"`
	GroupsClaim    string   `json:"groupsClaim"`
	IssuerURL      string   `json:"issuerURL"`
	SigningAlgs    []string `json:"signingAlgs"`
	UsernameClaim  string   `json:"usernameClaim"`
	UsernamePrefix string   `json:"usernamePrefix"`
}

// KubeAPIServerConfig holds what every shoot's API server gets.
type KubeAPIServerConfig struct {
	// MaxTokenExpiration bounds service account tokens, a Go duration; it is clamped into
	// [720h, 2160h], Gardener's bounds, and 720h when empty.
	MaxTokenExpiration string `json:"maxTokenExpiration,omitempty"`
	// RuntimeConfig switches API groups and versions on or off.
	RuntimeConfig map[string]bool `json:"runtimeConfig,omitempty"`
	// FeatureGates of kube-apiserver.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// ACL names the ConfigMap with the operators' and the control plane's addresses, which every
	// API server access list includes.
	ACL ACLConfig `json:"acl"`
}

// ACLConfig locates the ACL ConfigMap in the manager's namespace.
type ACLConfig struct {
	ConfigMapName string `json:"configMapName,omitempty"`
}

// KubeletConfig holds what every worker's kubelet gets.
type KubeletConfig struct {
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// DNSConfig is the landscape's DNS provider. All three fields empty means Gardener's own DNS:
// shoots get the garden's default domain.
type DNSConfig struct {
	// SecretName is the Secret in the project namespace with the provider's credentials.
	SecretName string `json:"secretName,omitempty"`
	// DomainPrefix is the domain below which each shoot gets <shoot>.<prefix>.
	DomainPrefix string `json:"domainPrefix,omitempty"`
	// ProviderType is Gardener's DNS provider type, such as aws-route53.
	ProviderType string `json:"providerType,omitempty"`
}

// GardenerInternal reports whether shoots use Gardener's own DNS.
func (c DNSConfig) GardenerInternal() bool {
	return c.SecretName == "" && c.DomainPrefix == "" && c.ProviderType == ""
}

// ProviderConfig holds provider-specific settings and the settings of every worker pool.
type ProviderConfig struct {
	AWS AWSConfig `json:"aws"`
	// Worker holds the machine controller manager settings of worker pools that set none.
	Worker WorkerConfig `json:"worker"`
}

// WorkerConfig holds the drain settings every worker pool gets unless it sets its own, in
// upstream's form: strings.
type WorkerConfig struct {
	// DefaultMaxEvictRetries is how often a pod eviction is retried while a node drains, a
	// decimal integer such as "30".
	DefaultMaxEvictRetries string `json:"defaultMaxEvictRetries,omitempty"`
	// DefaultMachineDrainTimeout bounds a node's drain, a Go duration such as "48h".
	DefaultMachineDrainTimeout string `json:"defaultMachineDrainTimeout,omitempty"`
}

// AWSConfig holds the settings of AWS shoots.
type AWSConfig struct {
	// EnableIMDSv2 requires session tokens for the instance metadata service on every worker.
	EnableIMDSv2 bool `json:"enableIMDSv2"`
}

// MachineImageConfig is the image of worker pools that name none. Both fields are required.
type MachineImageConfig struct {
	DefaultName    string `json:"defaultName"`
	DefaultVersion string `json:"defaultVersion"`
}

// GardenerConfig locates the Gardener project.
type GardenerConfig struct {
	// ProjectName is the project; shoots live in garden-<project>. Required.
	ProjectName string `json:"projectName"`
	// EnableCredentialBinding names a shoot's credentials by credentialsBindingName for every
	// Kubernetes version, not only from 1.34 on.
	EnableCredentialBinding bool `json:"enableCredentialBinding"`
}

// AuditLogConfig locates the shared audit logging configuration.
type AuditLogConfig struct {
	// PolicyConfigMapName is the audit policy ConfigMap in the project namespace. Required.
	PolicyConfigMapName string `json:"policyConfigMapName"`
	// TenantConfigPath is the JSON file of audit log tenants by provider type and region.
	// Required.
	TenantConfigPath string `json:"tenantConfigPath"`
}

// MaintenanceWindowConfig locates the maintenance windows of production runtimes.
type MaintenanceWindowConfig struct {
	// WindowMapPath is a JSON map from region to {"begin": ..., "end": ...}, as upstream reads
	// it, or a ConfigMap manifest whose data.config holds that map; empty leaves the window to
	// Gardener.
	WindowMapPath string `json:"windowMapPath,omitempty"`
}

// NetworkingConfig holds the network settings of the landscape.
type NetworkingConfig struct {
	// EnableDualStackIP allows runtimes to ask for IPv4 and IPv6.
	EnableDualStackIP bool `json:"enableDualStackIP"`
}

// AuditLogTenant is one tenant of the shared audit log service, as the tenant file holds it.
type AuditLogTenant struct {
	TenantID   string `json:"tenantID"`
	ServiceURL string `json:"serviceURL"`
	SecretName string `json:"secretName"`
}
