package v1

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Labels a Runtime carries, as upstream Kyma Environment Broker sets them. The ones in
// RequiredRuntimeLabels are enforced by the ValidatingAdmissionPolicy in config/admission.
const (
	LabelRuntimeID       = "kyma-project.io/runtime-id"
	LabelInstanceID      = "kyma-project.io/instance-id"
	LabelShootName       = "kyma-project.io/shoot-name"
	LabelRegion          = "kyma-project.io/region"
	LabelBrokerPlanID    = "kyma-project.io/broker-plan-id"
	LabelBrokerPlanName  = "kyma-project.io/broker-plan-name"
	LabelGlobalAccountID = "kyma-project.io/global-account-id"
	LabelSubaccountID    = "kyma-project.io/subaccount-id"
	LabelKymaName        = "operator.kyma-project.io/kyma-name"
	LabelPlatformRegion  = "kyma-project.io/platform-region"
	// LabelKymaManagedBy and LabelKymaInternal mark the GardenerCluster and its kubeconfig
	// Secret as upstream marks them (managed-by infrastructure-manager, internal true).
	LabelKymaManagedBy = "operator.kyma-project.io/managed-by"
	LabelKymaInternal  = "operator.kyma-project.io/internal"
	// LabelClusterName names the GardenerCluster on its kubeconfig Secret.
	LabelClusterName = "operator.kyma-project.io/cluster-name"
	// AnnotationLastSync is when the kubeconfig in the Secret was fetched (RFC 3339).
	AnnotationLastSync = "operator.kyma-project.io/last-sync"
	// AnnotationForceKubeconfigRotation on a GardenerCluster rotates its kubeconfig now; the
	// controller removes it once done.
	AnnotationForceKubeconfigRotation = "operator.kyma-project.io/force-kubeconfig-rotation"
	// AnnotationSKRDomain on a GardenerCluster is the runtime's DNS domain.
	AnnotationSKRDomain          = "skr-domain"
	LabelControlledByProvisioner = "kyma-project.io/controlled-by-provisioner"
)

// RequiredRuntimeLabels lists the labels without which a Runtime is rejected.
var RequiredRuntimeLabels = []string{
	LabelRuntimeID,
	LabelInstanceID,
	LabelShootName,
	LabelRegion,
	LabelBrokerPlanID,
	LabelBrokerPlanName,
	LabelGlobalAccountID,
	LabelSubaccountID,
	LabelKymaName,
}

// Condition types of a Runtime, as upstream names them, beside the summary Ready condition.
const (
	ConditionProvisioned     = "Provisioned"
	ConditionKubeconfigReady = "KubeconfigReady"
	ConditionConfigured      = "RuntimeConfigured"
	ConditionDeprovisioned   = "Deprovisioned"
	// ConditionOidcConfigured and ConditionKymaSystemNSCreated are upstream's types for the
	// additional OIDC providers and the kyma-system namespace.
	ConditionOidcConfigured      = "OidcAndConfigMapConfigured"
	ConditionKymaSystemNSCreated = "KymaSystemNSCreated"
	// ConditionVersionsAsRequested is False while the shoot runs a higher Kubernetes or machine
	// image version than the Runtime asks for: Gardener refuses downgrades, so the manager keeps
	// the running version and says so here.
	ConditionVersionsAsRequested = "VersionsAsRequested"
	// ConditionAPIServerACL is present on a Runtime that restricts its API server: False with
	// reason ACLNotApplied while the manager runs without API server ACLs and writes none.
	ConditionAPIServerACL = "APIServerACL"
)

// Runtime is one Kyma runtime: a Gardener shoot cluster and what Kyma needs in it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rt
// +kubebuilder:printcolumn:name="Shoot",type=string,JSONPath=`.spec.shoot.name`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.step.name`
// +kubebuilder:printcolumn:name="Attempt",type=integer,JSONPath=`.status.retry.attempt`
// +kubebuilder:printcolumn:name="Next Retry",type=string,JSONPath=`.status.retry.nextRetryAt`,description="When the failing step runs again (a date column would show a time ahead as <invalid>)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Runtime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RuntimeSpec   `json:"spec"`
	Status RuntimeStatus `json:"status,omitempty"`
}

// RuntimeList is a list of Runtimes.
//
// +kubebuilder:object:root=true
type RuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Runtime `json:"items"`
}

// RuntimeSpec is what the user asks for.
type RuntimeSpec struct {
	// Shoot describes the Gardener shoot cluster of the runtime.
	Shoot RuntimeShoot `json:"shoot"`

	// Security holds the runtime's administrators and network filter.
	Security Security `json:"security"`

	// ImageRegistryCache lists the pull-through caches of container registries the runtime's
	// nodes use, served by Gardener's registry-cache extension.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	ImageRegistryCache []ImageRegistryCache `json:"imageRegistryCache,omitempty"`

	// AuditLogAccessEnabled asks for a dedicated audit log the runtime's owner can read, instead
	// of the landscape's shared one.
	// +optional
	AuditLogAccessEnabled *bool `json:"auditLogAccessEnabled,omitempty"`
}

// ImageRegistryCache is one registry cache a user configured in the runtime, as upstream's
// registry cache controller copies it into the Runtime.
type ImageRegistryCache struct {
	// Name of the RegistryCacheConfig in the runtime cluster.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the RegistryCacheConfig in the runtime cluster.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// UID of the RegistryCacheConfig in the runtime cluster.
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid"`
	// Config of the cache.
	Config RegistryCacheConfigSpec `json:"config"`
}

// RegistryCacheConfigSpec configures one registry cache, with the field names of the
// registry-cache extension.
type RegistryCacheConfigSpec struct {
	// Upstream is the host name of the registry to cache.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Upstream string `json:"upstream"`
	// RemoteURL of the upstream registry, <scheme>://<host>[:<port>] with scheme http or https,
	// as the registry-cache extension takes it. The cache runs on the runtime's nodes, so its
	// host may be private, but not loopback, link-local (the cloud's metadata service) or
	// unspecified: the cache would serve what it finds there to every pod.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != '' && url(self).getEscapedPath() in ['', '/'] && url(self).getQuery().size() == 0 && !self.contains('@') && !self.contains('#')",message="remoteURL must be <scheme>://<host>[:<port>] with scheme http or https, without user info, path, query or fragment"
	// +kubebuilder:validation:XValidation:rule="!isURL(self) || [url(self).getHostname()].all(h, isIP(h) ? ip(h).isGlobalUnicast() : !(h.contains(':') || h.matches('^[0-9.]+$') || h.lowerAscii() == 'localhost'))",message="remoteURL must not be a loopback, link-local or unspecified address; name its host by a DNS name or an IP address"
	// +optional
	RemoteURL *string `json:"remoteURL,omitempty"`
	// Volume of the cache.
	// +optional
	Volume *RegistryCacheVolume `json:"volume,omitempty"`
	// GarbageCollection of cached content.
	// +optional
	GarbageCollection *RegistryCacheGarbageCollection `json:"garbageCollection,omitempty"`
	// SecretReferenceName names the reference to the Secret with the upstream credentials.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretReferenceName *string `json:"secretReferenceName,omitempty"`
	// Proxy the cache uses to reach the upstream.
	// +optional
	Proxy *RegistryCacheProxy `json:"proxy,omitempty"`
	// HTTP server settings of the cache.
	// +optional
	HTTP *RegistryCacheHTTP `json:"http,omitempty"`
}

// RegistryCacheVolume is the volume of a registry cache.
type RegistryCacheVolume struct {
	// Size of the volume.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the volume.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// RegistryCacheGarbageCollection is the garbage collection of a registry cache.
type RegistryCacheGarbageCollection struct {
	// TTL of a blob in the cache; 0s disables garbage collection.
	TTL metav1.Duration `json:"ttl"`
}

// RegistryCacheProxy is the proxy a registry cache uses.
type RegistryCacheProxy struct {
	// HTTPProxy for HTTP connections.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	HTTPProxy *string `json:"httpProxy,omitempty"`
	// HTTPSProxy for HTTPS connections.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	HTTPSProxy *string `json:"httpsProxy,omitempty"`
}

// RegistryCacheHTTP is the HTTP server of a registry cache.
type RegistryCacheHTTP struct {
	// TLS switches TLS for the cache's HTTP server.
	// +optional
	TLS bool `json:"tls,omitempty"`
}

// RuntimeShoot describes the Gardener shoot cluster of a runtime.
type RuntimeShoot struct {
	// Name of the shoot: a DNS label of at most 21 characters, as Gardener allows.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=21
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.shoot.name is immutable: a runtime cannot move to another shoot"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="spec.shoot.name must consist of lower case letters, digits and '-', and start and end with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="!self.contains('--')",message="spec.shoot.name must not contain '--': Gardener refuses such shoot names"
	Name string `json:"name"`

	// Purpose of the shoot.
	// +kubebuilder:validation:Enum=evaluation;testing;development;production;infrastructure
	Purpose string `json:"purpose"`

	// PlatformRegion is the region of the platform the runtime belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	PlatformRegion string `json:"platformRegion"`

	// Region of the hyperscaler the shoot runs in.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// LicenceType of the runtime, if any.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	LicenceType *string `json:"licenceType,omitempty"`

	// SecretBindingName names the Gardener secret binding with the hyperscaler credentials.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretBindingName string `json:"secretBindingName"`

	// EnforceSeedLocation keeps the seed cluster in the runtime's region.
	// +optional
	EnforceSeedLocation *bool `json:"enforceSeedLocation,omitempty"`

	// EnableNvidiaOpenshell enables Gardener's shoot-nvidia-openshell extension.
	// +optional
	EnableNvidiaOpenshell *bool `json:"enableNvidiaOpenshell,omitempty"`

	// Kubernetes settings of the shoot.
	// +optional
	Kubernetes Kubernetes `json:"kubernetes,omitempty"`

	// Provider of the shoot and its worker pools.
	Provider Provider `json:"provider"`

	// Networking of the shoot.
	Networking Networking `json:"networking"`

	// ControlPlane settings of the shoot.
	// +optional
	ControlPlane *ControlPlane `json:"controlPlane,omitempty"`
}

// Kubernetes holds the Kubernetes settings of a shoot.
type Kubernetes struct {
	// Version of Kubernetes; the default version is used when empty.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+[.][0-9]+([.][0-9]+)?$')",message="spec.shoot.kubernetes.version must look like MAJOR.MINOR or MAJOR.MINOR.PATCH, for example 1.30.2"
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Version *string `json:"version,omitempty"`

	// KubeAPIServer settings.
	// +optional
	KubeAPIServer APIServer `json:"kubeAPIServer,omitempty"`
}

// APIServer holds the kube-apiserver settings of a shoot.
//
// +kubebuilder:validation:XValidation:rule="!has(self.oidcConfig) || !has(self.oidcConfig.jwks)",message="spec.shoot.kubernetes.kubeAPIServer.oidcConfig.jwks is not supported: structured authentication reads the main provider's keys from its issuer; give offline keys to an additionalOidcConfig entry"
type APIServer struct {
	// OidcConfig is the OIDC provider the runtime's users log in with. The manager writes it into
	// the shoot's structured authentication configuration; when it is empty, the landscape's
	// default operator OIDC provider is used.
	// +optional
	OidcConfig OIDCConfig `json:"oidcConfig,omitempty"`

	// AdditionalOidcConfig lists further OIDC providers. The manager registers each one in the
	// runtime cluster as an OpenIDConnect resource of Gardener's shoot-oidc-service extension,
	// named kyma-oidc-<index>, so each needs a client ID and an issuer URL.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(c, has(c.clientID) && size(c.clientID) > 0 && has(c.issuerURL))",message="every spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig entry needs clientID and issuerURL"
	// +optional
	AdditionalOidcConfig *[]OIDCConfig `json:"additionalOidcConfig,omitempty"`

	// ACL restricts which networks reach the shoot's API server, through Gardener's acl
	// extension.
	// +optional
	ACL *ACL `json:"acl,omitempty"`
}

// ACL restricts which networks reach an API server.
type ACL struct {
	// AllowedCIDRs are the networks allowed to reach the API server.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs must hold CIDRs such as 10.0.0.0/8"
	AllowedCIDRs []string `json:"allowedCIDRs"`
}

// OIDCConfig configures an OIDC provider of a kube-apiserver, with Gardener's field names.
//
// +kubebuilder:validation:XValidation:rule="!has(self.clientAuthentication)",message="clientAuthentication is not supported: neither the structured authentication configuration nor an OpenIDConnect resource has a client secret, and upstream writes it nowhere; remove it",fieldPath=".clientAuthentication"
type OIDCConfig struct {
	// CABundle validates the provider's certificate.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	CABundle *string `json:"caBundle,omitempty"`

	// ClientID of the runtime at the provider.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ClientID *string `json:"clientID,omitempty"`

	// GroupsClaim is the JWT claim holding the user's groups.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	GroupsClaim *string `json:"groupsClaim,omitempty"`

	// GroupsPrefix is prepended to group names. It must not start with system:, which would
	// put the provider's groups among Kubernetes' own (system:masters).
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('system:')",message="groupsPrefix must not start with system:, the prefix of Kubernetes' own groups"
	// +optional
	GroupsPrefix *string `json:"groupsPrefix,omitempty"`

	// ClientAuthentication holds the client's secret and extra configuration, as Gardener's
	// OIDCConfig has it. It is refused: nothing the manager writes can carry it.
	// +optional
	ClientAuthentication *gardencorev1beta1.OpenIDConnectClientAuthentication `json:"clientAuthentication,omitempty"`

	// IssuerURL of the provider; it must use https, carry no user info, and name its host by a
	// DNS name or an IP address that is neither loopback, link-local nor private.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() == 'https'",message="issuerURL must be an https URL"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[^/]*//[^/?#]*@')",message="issuerURL must not contain user info (user:password@)"
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^https://([^/?#@]*@)?(\\[[0-9A-Fa-f:.]+\\]|[0-9]{1,3}([.][0-9]{1,3}){3}|([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?[.])*[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?[.]?)(:[0-9]{1,5})?([/?#].*)?$')",message="issuerURL must start with https:// and name its host by a DNS name whose last label starts with a letter, or by an IP address"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('https://') || self.find(r'^https://[^/?#]*').contains('@') || [self.find(r'^https://[^/?#]*').substring(8)].all(a, [a.startsWith('[') ? (a.indexOf(']') > 0 ? a.substring(1, a.indexOf(']')) : '') : (a.indexOf(':') >= 0 ? a.substring(0, a.indexOf(':')) : a)].all(h, isIP(h) ? ip(h).isGlobalUnicast() && !['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'].exists(c, cidr(c).containsIP(h)) : !(h.contains(':') || h.matches('^[0-9.]+$'))))",message="issuerURL must not be a loopback, link-local, private or otherwise non-global IP address"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('https://') || self.find(r'^https://[^/?#]*').contains('@') || [self.find(r'^https://[^/?#]*').substring(8)].all(a, [a.startsWith('[') ? (a.indexOf(']') > 0 ? a.substring(1, a.indexOf(']')) : '') : (a.indexOf(':') >= 0 ? a.substring(0, a.indexOf(':')) : a)].all(h, !h.lowerAscii().matches('(^|[.])localhost[.]?$')))",message="issuerURL must not be localhost"
	// +optional
	IssuerURL *string `json:"issuerURL,omitempty"`

	// RequiredClaims must be present in every token.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	RequiredClaims map[string]string `json:"requiredClaims,omitempty"`

	// SigningAlgs are the accepted signing algorithms.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Enum=RS256;RS384;RS512;ES256;ES384;ES512;PS256;PS384;PS512
	// +optional
	SigningAlgs []string `json:"signingAlgs,omitempty"`

	// UsernameClaim is the JWT claim holding the user name.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	UsernameClaim *string `json:"usernameClaim,omitempty"`

	// UsernamePrefix is prepended to user names; "-" means none. When it is unset, the manager
	// writes out the prefix the legacy --oidc-username-prefix flag implied: none for the claim
	// email, the issuer URL followed by '#' for any other claim.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('system:')",message="usernamePrefix must not start with system:, the prefix of Kubernetes' own users"
	UsernamePrefix *string `json:"usernamePrefix,omitempty"`

	// JWKS is the provider's JSON Web Key Set, for issuers the runtime cannot reach. Admission
	// checks that it is a JSON object with keys; ValidateJWKS checks every key.
	// +kubebuilder:validation:MaxLength=65536
	// +kubebuilder:validation:XValidation:rule="string(self).matches(r'^[ \\t\\r\\n]*[{][\\s\\S]*\"keys\"[ \\t\\r\\n]*:[ \\t\\r\\n]*\\[[\\s\\S]*[}][ \\t\\r\\n]*$')",message="jwks must be a JSON Web Key Set: a JSON object with a keys array"
	// +optional
	JWKS []byte `json:"jwks,omitempty"`
}

// Provider holds the hyperscaler and worker pools of a shoot.
// +kubebuilder:validation:XValidation:rule="!has(self.additionalWorkers) || self.additionalWorkers.all(a, !self.workers.exists(w, w.name == a.name))",message="spec.shoot.provider.additionalWorkers must not repeat a name of spec.shoot.provider.workers: Gardener refuses worker pools of the same name",fieldPath=".additionalWorkers"
type Provider struct {
	// Type of the hyperscaler.
	// +kubebuilder:validation:Enum=aws;azure;gcp;openstack;alicloud
	Type string `json:"type"`

	// Workers are the shoot's worker pools; the first one hosts Kyma.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(w, self.exists_one(x, x.name == w.name))",message="spec.shoot.provider.workers must have unique names"
	Workers []Worker `json:"workers"`

	// AdditionalWorkers are further worker pools.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(w, self.exists_one(x, x.name == w.name))",message="spec.shoot.provider.additionalWorkers must have unique names"
	// +optional
	AdditionalWorkers *[]Worker `json:"additionalWorkers,omitempty"`

	// ControlPlaneConfig is passed to the provider extension unchanged.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ControlPlaneConfig *runtime.RawExtension `json:"controlPlaneConfig,omitempty"`

	// InfrastructureConfig is passed to the provider extension unchanged.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	InfrastructureConfig *runtime.RawExtension `json:"infrastructureConfig,omitempty"`
}

// Worker is a worker pool of a shoot, with Gardener's field names and every field of Gardener's
// Worker; the manager passes each to the shoot.
//
// +kubebuilder:validation:XValidation:rule="self.minimum <= self.maximum",message="worker minimum must not exceed maximum"
type Worker struct {
	// Name of the pool.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="worker name must be a DNS label"
	Name string `json:"name"`

	// Machine of the pool's nodes.
	Machine Machine `json:"machine"`

	// Minimum number of nodes.
	// +kubebuilder:validation:Minimum=0
	Minimum int32 `json:"minimum"`

	// Maximum number of nodes.
	// +kubebuilder:validation:Minimum=0
	Maximum int32 `json:"maximum"`

	// MaxSurge is how many nodes may be added during a rolling update.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// MaxUnavailable is how many nodes may be missing during a rolling update.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// Volume is the root disk of the nodes.
	// +optional
	Volume *Volume `json:"volume,omitempty"`

	// DataVolumes are further disks of the nodes.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	DataVolumes []DataVolume `json:"dataVolumes,omitempty"`

	// KubeletDataVolumeName names the data volume that holds the kubelet's data.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	KubeletDataVolumeName *string `json:"kubeletDataVolumeName,omitempty"`

	// Zones the pool spreads over.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Zones []string `json:"zones"`

	// CRI is the container runtime of the nodes and further runtimes such as gVisor.
	// +optional
	CRI *CRI `json:"cri,omitempty"`

	// Annotations for the nodes' Node objects.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels for the nodes' Node objects.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Taints for the nodes.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// CABundle the nodes trust in addition.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	CABundle *string `json:"caBundle,omitempty"`

	// Kubernetes settings of the pool: the kubelet and a pool-specific version.
	// +optional
	Kubernetes *gardencorev1beta1.WorkerKubernetes `json:"kubernetes,omitempty"`

	// SystemComponents says whether system components run on the pool.
	// +optional
	SystemComponents *gardencorev1beta1.WorkerSystemComponents `json:"systemComponents,omitempty"`

	// MachineControllerManagerSettings tunes the machine controller manager for the pool.
	// +optional
	MachineControllerManagerSettings *gardencorev1beta1.MachineControllerManagerSettings `json:"machineControllerManager,omitempty"`

	// Sysctls set on the nodes.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Sysctls map[string]string `json:"sysctls,omitempty"`

	// ClusterAutoscaler options of the pool.
	// +optional
	ClusterAutoscaler *gardencorev1beta1.ClusterAutoscalerOptions `json:"clusterAutoscaler,omitempty"`

	// Priority of the pool for the cluster autoscaler's priority expander.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// UpdateStrategy of the pool's machines.
	// +kubebuilder:validation:Enum=AutoRollingUpdate;AutoInPlaceUpdate;ManualInPlaceUpdate
	// +optional
	UpdateStrategy *string `json:"updateStrategy,omitempty"`

	// ControlPlane makes the pool host the shoot's own control plane (self-hosted shoots).
	// +optional
	ControlPlane *gardencorev1beta1.WorkerControlPlane `json:"controlPlane,omitempty"`

	// ProviderConfig is passed to the provider extension unchanged.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ProviderConfig *runtime.RawExtension `json:"providerConfig,omitempty"`
}

// Machine is the machine type and image of a worker pool.
type Machine struct {
	// Type of the machine, as the hyperscaler names it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Type string `json:"type"`

	// Image of the machine; the default image is used when empty.
	// +optional
	Image *ShootMachineImage `json:"image,omitempty"`

	// Architecture of the machine.
	// +kubebuilder:validation:Enum=amd64;arm64
	// +optional
	Architecture *string `json:"architecture,omitempty"`
}

// ShootMachineImage names a machine image.
type ShootMachineImage struct {
	// Name of the image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// Version of the image.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Version *string `json:"version,omitempty"`

	// ProviderConfig of the image, passed to the provider extension unchanged.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ProviderConfig *runtime.RawExtension `json:"providerConfig,omitempty"`
}

// Volume is a node's root disk.
type Volume struct {
	// Name of the volume.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name *string `json:"name,omitempty"`

	// Type of the volume, as the hyperscaler names it.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Type *string `json:"type,omitempty"`

	// Size of the volume, a quantity such as 50Gi.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",message="volume size must be a positive quantity such as 50Gi"
	Size string `json:"size"`

	// Encrypted asks for an encrypted volume.
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`
}

// DataVolume is a further disk of a node.
type DataVolume struct {
	// Name of the volume.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Type of the volume, as the hyperscaler names it.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Type *string `json:"type,omitempty"`

	// Size of the volume, a quantity such as 50Gi.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",message="data volume size must be a positive quantity such as 50Gi"
	Size string `json:"size"`

	// Encrypted asks for an encrypted volume.
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`
}

// CRI names a container runtime.
type CRI struct {
	// Name of the container runtime.
	// +kubebuilder:validation:Enum=containerd
	Name string `json:"name"`

	// ContainerRuntimes are further runtimes the nodes offer, such as gVisor.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	ContainerRuntimes []ContainerRuntime `json:"containerRuntimes,omitempty"`
}

// ContainerRuntime is a further container runtime of the nodes.
type ContainerRuntime struct {
	// Type of the runtime, such as gvisor.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Type string `json:"type"`

	// ProviderConfig of the runtime, passed to its extension unchanged.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ProviderConfig *runtime.RawExtension `json:"providerConfig,omitempty"`
}

// Networking holds the shoot's network ranges.
type Networking struct {
	// Type of the network plugin.
	// +kubebuilder:validation:Enum=calico;cilium
	// +optional
	Type *string `json:"type,omitempty"`

	// Pods is the CIDR of the pod network.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="spec.shoot.networking.pods must be a CIDR such as 100.64.0.0/12"
	Pods string `json:"pods"`

	// Nodes is the CIDR of the node network.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="spec.shoot.networking.nodes must be a CIDR such as 10.250.0.0/16"
	Nodes string `json:"nodes"`

	// Services is the CIDR of the service network.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="spec.shoot.networking.services must be a CIDR such as 100.104.0.0/13"
	Services string `json:"services"`

	// DualStack gives the shoot IPv6 besides IPv4, where the provider supports it.
	// +optional
	DualStack *bool `json:"dualStack,omitempty"`

	// VPCNetwork names an existing VPC or VNet the shoot uses instead of creating one.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	VPCNetwork *string `json:"vpcNetwork,omitempty"`
}

// ControlPlane holds the shoot's control plane settings.
type ControlPlane struct {
	// HighAvailability spreads the control plane over nodes or zones.
	// +optional
	HighAvailability *HighAvailability `json:"highAvailability,omitempty"`
}

// HighAvailability spreads a control plane.
type HighAvailability struct {
	// FailureTolerance says what failure the control plane survives.
	FailureTolerance FailureTolerance `json:"failureTolerance"`
}

// FailureTolerance says what failure a control plane survives.
type FailureTolerance struct {
	// Type of failure tolerated.
	// +kubebuilder:validation:Enum=node;zone
	Type string `json:"type"`
}

// Security holds the runtime's administrators and network filter.
type Security struct {
	// Administrators of the runtime, who get cluster-admin in it: user names as the runtime's
	// OIDC providers issue them. Kubernetes' own users and groups (system:anonymous,
	// system:masters, system:serviceaccount:...) are refused, as are names with surrounding white
	// space or control characters, which no provider issues.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:XValidation:rule="!self.startsWith('system:')",message="an administrator must not start with system:, the prefix of Kubernetes' own users and groups"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches(r'^[\\s\\p{Z}]|[\\s\\p{Z}]$')",message="an administrator must not start or end with white space"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches(r'[\\p{Cc}\\p{Cf}]')",message="an administrator must not contain control or format characters"
	Administrators []string `json:"administrators"`

	// Networking filter settings.
	Networking NetworkingSecurity `json:"networking"`
}

// NetworkingSecurity holds the network filter of a runtime.
type NetworkingSecurity struct {
	// Filter of the runtime's traffic.
	Filter Filter `json:"filter"`
}

// Filter switches the runtime's traffic filters.
type Filter struct {
	// Ingress filter: blackholing in Gardener's shoot-networking-filter extension, so incoming
	// traffic from blocked networks is dropped too. It takes effect while the egress filter is
	// enabled.
	// +optional
	Ingress *Ingress `json:"ingress,omitempty"`

	// Egress filter: Gardener's shoot-networking-filter extension.
	Egress Egress `json:"egress"`
}

// Ingress switches the ingress filter.
type Ingress struct {
	// Enabled switches the filter on.
	Enabled bool `json:"enabled"`
}

// Egress switches the egress filter.
type Egress struct {
	// Enabled switches the filter on.
	Enabled bool `json:"enabled"`
}

// RuntimeStatus is what the manager observed and did.
type RuntimeStatus struct {
	EngineStatus `json:",inline"`

	// ProvisioningCompleted is true once the runtime was Ready for the first time.
	// +optional
	ProvisioningCompleted bool `json:"provisioningCompleted,omitempty"`

	// Gardener mirrors the shoot's last operation and errors for operators.
	// +optional
	Gardener *GardenerStatus `json:"gardener,omitempty"`

	// ShootLastOperation is the shoot's last operation as Gardener reports it, under the name
	// upstream's manager writes it.
	// +optional
	ShootLastOperation *gardencorev1beta1.LastOperation `json:"shootLastOperation,omitempty"`

	// ShootLastErrors are the shoot's last errors as Gardener reports them, under the name
	// upstream's manager writes them.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ShootLastErrors []gardencorev1beta1.LastError `json:"shootLastErrors,omitempty"`

	// ShootMissing is set while the shoot of a provisioned runtime is gone and was not deleted
	// by the manager. The manager does not recreate such a shoot on its own; a manual retry
	// requested after the shoot went missing does.
	// +optional
	ShootMissing *ShootMissingStatus `json:"shootMissing,omitempty"`
}

// ShootMissingStatus records a shoot that disappeared after its runtime was provisioned.
type ShootMissingStatus struct {
	// RetryRequestedAt is status.retryRequestedAt when the shoot was found missing. A manual
	// retry with another value recreates the shoot.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RetryRequestedAt string `json:"retryRequestedAt,omitempty"`
}

// GardenerStatus mirrors what Gardener reports about the shoot.
type GardenerStatus struct {
	// LastOperation is the shoot's last operation: type, state, progress and description.
	// +optional
	LastOperation *LastOperation `json:"lastOperation,omitempty"`

	// LastErrors are the shoot's last errors with their Gardener error codes.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	LastErrors []LastError `json:"lastErrors,omitempty"`
}

// LastOperation mirrors a shoot's status.lastOperation.
type LastOperation struct {
	// Type of the operation: Create, Reconcile, Delete, ...
	Type string `json:"type"`
	// State of the operation: Processing, Succeeded, Error, Failed, ...
	State string `json:"state"`
	// Progress in percent.
	// +optional
	Progress int32 `json:"progress,omitempty"`
	// Description of the operation, truncated.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`
	// LastUpdateTime of the operation.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
}

// LastError mirrors one entry of a shoot's status.lastErrors.
type LastError struct {
	// Codes are the Gardener error codes, such as ERR_INFRA_QUOTA_EXCEEDED.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Codes []string `json:"codes,omitempty"`
	// Description of the error, sanitized and truncated.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Description string `json:"description,omitempty"`
}
