package gardener

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener/provider"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Names the converter writes into a Shoot.
const (
	// AnnotationRuntimeID carries the runtime ID on the Shoot, so a Shoot can be traced back to
	// its Runtime without parsing labels.
	AnnotationRuntimeID = "infrastructuremanager.kyma-project.io/runtime-id"
	// AnnotationLicenceType carries the Runtime's licence type, when it has one.
	AnnotationLicenceType = "infrastructuremanager.kyma-project.io/licence-type"
	// LabelSeedRegion is the Seed label that spec.seedSelector matches when a Runtime enforces
	// its seed location.
	LabelSeedRegion = "seed.gardener.cloud/region"
	// ExtensionNetworkingFilter is the Gardener extension that implements the egress filter and,
	// by blackholing, the ingress filter.
	ExtensionNetworkingFilter = "shoot-networking-filter"
	// ExtensionOIDCService is the Gardener extension that serves OpenIDConnect resources in the
	// shoot, through which the additional OIDC providers are registered.
	ExtensionOIDCService = "shoot-oidc-service"
	// ExtensionACL is the Gardener extension that restricts which networks reach the shoot's
	// API server.
	ExtensionACL = "acl"
	// ExtensionNvidiaOpenshell is the Gardener extension a Runtime enables with
	// enableNvidiaOpenshell.
	ExtensionNvidiaOpenshell = "shoot-nvidia-openshell"
	// ExtensionRegistryCache is the Gardener extension that serves the Runtime's image registry
	// caches.
	ExtensionRegistryCache = "registry-cache"
	// DefaultNetworkingType is the network plugin used when the Runtime names none.
	DefaultNetworkingType = "calico"
	// LabelAccount carries the global account id on the Shoot, as upstream (and the provisioner
	// before it) label shoots.
	LabelAccount = "account"
	// LabelSubaccount carries the subaccount id on the Shoot, as upstream labels shoots.
	LabelSubaccount = "subaccount"
)

// cleanupGracePeriods are the annotations with which upstream shortens the grace periods of
// Gardener's cleanup of a deleted shoot's webhooks, extended APIs and Kubernetes resources,
// in seconds.
var cleanupGracePeriods = map[string]string{
	"shoot.gardener.cloud/cleanup-webhooks-finalize-grace-period-seconds":             "60",
	"shoot.gardener.cloud/cleanup-extended-apis-finalize-grace-period-seconds":        "120",
	"shoot.gardener.cloud/cleanup-kubernetes-resources-finalize-grace-period-seconds": "120",
}

// accountLabels maps the Shoot's account labels to the Runtime labels they are copied from.
var accountLabels = map[string]string{
	LabelAccount:    infrav1.LabelGlobalAccountID,
	LabelSubaccount: infrav1.LabelSubaccountID,
}

const (
	// cloudProfileKind is the kind of the cloud profile a Shoot references.
	cloudProfileKind = "CloudProfile"
	// credentialsBindingVersion is the first Kubernetes version whose shoots must name their
	// credentials by credentialsBindingName.
	credentialsBindingVersion = "1.34.0"
)

// Reasons of the terminal errors Render returns.
const (
	// ReasonUnsupportedProvider is the reason when the Runtime's provider type is unknown.
	ReasonUnsupportedProvider = "UnsupportedProvider"
	// ReasonInvalidRuntime is the reason when the Runtime is nil or has no shoot name.
	ReasonInvalidRuntime = "InvalidRuntime"
	// ReasonInvalidConvertOptions is the reason when the ConvertOptions lack the namespace.
	ReasonInvalidConvertOptions = "InvalidConvertOptions"
)

// Errors that Render wraps, for errors.Is.
var (
	// ErrUnsupportedProvider means the Runtime's provider type has no Gardener counterpart here.
	ErrUnsupportedProvider = errors.New("unsupported provider type")
	// ErrInvalidRuntime means the Runtime cannot describe a Shoot (nil or without shoot name).
	ErrInvalidRuntime = errors.New("invalid runtime")
	// ErrMissingNamespace means ConvertOptions.Namespace is empty.
	ErrMissingNamespace = errors.New("missing project namespace")
)

// copiedLabels are the Runtime labels that are copied onto its Shoot.
var copiedLabels = []string{
	infrav1.LabelRuntimeID,
	infrav1.LabelInstanceID,
	infrav1.LabelGlobalAccountID,
	infrav1.LabelSubaccountID,
	infrav1.LabelShootName,
	infrav1.LabelRegion,
	infrav1.LabelBrokerPlanID,
	infrav1.LabelBrokerPlanName,
}

// cloudProfiles maps a Runtime's spec.shoot.provider.type, which is also the Shoot's
// spec.provider.type, to the cloud profile the Shoot references, as upstream names them.
var cloudProfiles = map[string]string{
	"aws":       "aws",
	"azure":     "az",
	"gcp":       "gcp",
	"openstack": "converged-cloud-kyma",
	"alicloud":  "alicloud",
}

// ConvertOptions holds what Render needs beyond the Runtime: the landscape defaults.
type ConvertOptions struct {
	// Namespace is the Gardener project namespace the Shoot lives in, garden-<project>. Required.
	Namespace string
	// DefaultKubernetesVersion is used when the Runtime names no Kubernetes version. When both
	// are empty, the version is left empty and Gardener defaults it from the cloud profile.
	DefaultKubernetesVersion string
	// DefaultMachineImage is the image of a worker pool that names none. When empty, such a
	// pool gets no image and Gardener defaults it from the cloud profile.
	DefaultMachineImage string
	// DefaultMachineImageVersion is the version of DefaultMachineImage; it is also used for a
	// pool that names DefaultMachineImage without a version.
	DefaultMachineImageVersion string
	// Labels are extra labels set on every Shoot, such as the manager's ownership label. The
	// labels copied from the Runtime win on a clash.
	Labels map[string]string
	// DefaultOIDC is the operators' OIDC provider, used as the main provider of a Runtime that
	// names none. When it is nil too, such a shoot gets no structured authentication.
	DefaultOIDC *infrav1.OIDCConfig
	// DefaultAdditionalOIDC is the landscape's shared identity tenant, the one additional
	// provider of a Runtime that leaves additionalOidcConfig unset.
	DefaultAdditionalOIDC *infrav1.OIDCConfig

	// The landscape's configuration; the zero values are a landscape without any.

	// KubernetesAutoUpdate and MachineImageAutoUpdate let Gardener's maintenance update the
	// Kubernetes patch version and the machine image versions.
	KubernetesAutoUpdate, MachineImageAutoUpdate bool
	// MaintenanceWindows holds the maintenance window of production runtimes by region.
	MaintenanceWindows map[string]gardencorev1beta1.MaintenanceTimeWindow
	// DNS is the landscape's DNS provider; nil uses Gardener's default domain.
	DNS *DNS
	// AuditLog is the shared audit logging; nil turns it off.
	AuditLog *AuditLog
	// Tolerations holds the tolerations of shoots by region.
	Tolerations map[string][]gardencorev1beta1.Toleration
	// MaxTokenExpiration bounds service account tokens, clamped into Gardener's bounds.
	MaxTokenExpiration time.Duration
	// KubeAPIServerFeatureGates, KubeAPIServerRuntimeConfig and KubeletFeatureGates are set on
	// every shoot.
	KubeAPIServerFeatureGates, KubeAPIServerRuntimeConfig, KubeletFeatureGates map[string]bool
	// AWSIMDSv2 requires instance metadata session tokens on AWS workers.
	AWSIMDSv2 bool
	// WorkerMachineControllerManager holds the drain settings a worker pool gets for each
	// field it leaves unset; nil sets none.
	WorkerMachineControllerManager *gardencorev1beta1.MachineControllerManagerSettings
	// CredentialsBinding names the credentials by credentialsBindingName for every Kubernetes
	// version, not only from 1.34 on.
	CredentialsBinding bool
	// DualStackDisabled ignores a Runtime's request for IPv4 and IPv6.
	DualStackDisabled bool
	// ACL holds the addresses every API server access list includes; nil turns ACLs off.
	ACL *ACL
}

// Rendered is everything the manager writes to the garden for one Runtime.
type Rendered struct {
	// Shoot is the desired Shoot: the fields the manager owns, ready for a server-side apply
	// (TypeMeta is set), and nothing Gardener defaults or writes itself.
	Shoot *gardencorev1beta1.Shoot
	// AuthenticationConfig is the structured authentication ConfigMap the Shoot references, in
	// the project namespace; nil when there is no main OIDC provider.
	AuthenticationConfig *corev1.ConfigMap
	// Kept lists the versions kept higher than the Runtime asked for, because the shoot already
	// runs them and Gardener refuses a downgrade.
	Kept []KeptVersion
}

// Objects returns the objects in the order the manager writes them: the ConfigMap the Shoot
// references first, then the Shoot.
func (r Rendered) Objects() []client.Object {
	var out []client.Object
	if r.AuthenticationConfig != nil {
		out = append(out, r.AuthenticationConfig)
	}
	if r.Shoot != nil {
		out = append(out, r.Shoot)
	}
	return out
}

// YAML returns the objects as a YAML stream in write order, with only what the manager sends:
// no status and no server-set metadata.
func (r Rendered) YAML() ([]byte, error) {
	var out bytes.Buffer
	for _, obj := range r.Objects() {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		data, err := yaml.Marshal(u)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.Bytes(), nil
}

// KeptVersion is a version the Runtime asked for that the shoot already runs a newer one of.
type KeptVersion struct {
	// What names the version: "Kubernetes" or "worker pool NAME machine image IMAGE".
	What string
	// Requested is the version the Runtime asked for.
	Requested string
	// Kept is the version the shoot runs and keeps.
	Kept string
}

// String says what was kept, for status messages.
func (k KeptVersion) String() string {
	return fmt.Sprintf("%s %s kept instead of the requested %s", k.What, k.Kept, k.Requested)
}

// Render returns what the manager writes to the garden for rt: the Shoot and its structured
// authentication ConfigMap. current is the shoot as Gardener has it, nil before it exists; the
// render keeps what a running shoot cannot change (its provider network layout, versions it
// already runs) and changes only what the Runtime asks for. The Shoot is named after
// rt.Spec.Shoot.Name, never generated, so a create whose reply was lost finds the same Shoot
// again instead of creating a second one. The result shares no memory with rt or current.
//
// Errors are terminal (retry.Terminal): an unknown provider type, a nil Runtime, an empty shoot
// name or an empty opts.Namespace, a node network too small for the zones, or a current shoot
// whose provider config cannot be read. No retry can fix them.
func Render(rt *infrav1.Runtime, current *gardencorev1beta1.Shoot, opts ConvertOptions) (Rendered, error) {
	if rt == nil {
		return Rendered{}, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("convert runtime: %w", ErrInvalidRuntime))
	}
	if rt.Spec.Shoot.Name == "" {
		return Rendered{}, retry.Terminal(ReasonInvalidRuntime,
			fmt.Errorf("convert runtime %s: spec.shoot.name is empty: %w", rt.Name, ErrInvalidRuntime))
	}
	if opts.Namespace == "" {
		return Rendered{}, retry.Terminal(ReasonInvalidConvertOptions,
			fmt.Errorf("convert runtime %s: %w", rt.Name, ErrMissingNamespace))
	}
	profile, ok := cloudProfiles[rt.Spec.Shoot.Provider.Type]
	if !ok {
		return Rendered{}, retry.Terminal(ReasonUnsupportedProvider,
			fmt.Errorf("convert runtime %s: provider type %q: %w", rt.Name, rt.Spec.Shoot.Provider.Type, ErrUnsupportedProvider))
	}
	auth, err := AuthenticationConfigMap(rt, opts)
	if err != nil {
		return Rendered{}, err
	}
	b := &shootBuilder{rt: rt, current: current, opts: opts, profile: profile, auth: auth}
	spec, err := b.spec()
	if err != nil {
		return Rendered{}, err
	}
	return Rendered{
		Shoot: &gardencorev1beta1.Shoot{
			TypeMeta: metav1.TypeMeta{
				APIVersion: gardencorev1beta1.SchemeGroupVersion.String(),
				Kind:       "Shoot",
			},
			ObjectMeta: objectMeta(rt, opts),
			Spec:       spec,
		},
		AuthenticationConfig: auth,
		Kept:                 b.kept,
	}, nil
}

// shootBuilder carries one render's inputs and collects the versions it kept.
type shootBuilder struct {
	rt      *infrav1.Runtime
	current *gardencorev1beta1.Shoot
	opts    ConvertOptions
	profile string
	auth    *corev1.ConfigMap
	kept    []KeptVersion
}

// objectMeta names the Shoot and copies the Runtime's identity into labels and annotations.
func objectMeta(rt *infrav1.Runtime, opts ConvertOptions) metav1.ObjectMeta {
	labels := maps.Clone(opts.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, key := range copiedLabels {
		if value, ok := rt.Labels[key]; ok {
			labels[key] = value
		}
	}
	for shootLabel, runtimeLabel := range accountLabels {
		if value, ok := rt.Labels[runtimeLabel]; ok {
			labels[shootLabel] = value
		}
	}
	annotations := maps.Clone(cleanupGracePeriods)
	if id, ok := rt.Labels[infrav1.LabelRuntimeID]; ok {
		annotations[AnnotationRuntimeID] = id
	}
	if lt := rt.Spec.Shoot.LicenceType; lt != nil && *lt != "" {
		annotations[AnnotationLicenceType] = *lt
	}
	return metav1.ObjectMeta{
		Name:        rt.Spec.Shoot.Name,
		Namespace:   opts.Namespace,
		Labels:      emptyToNil(labels),
		Annotations: emptyToNil(annotations),
	}
}

// spec builds the Shoot's spec.
func (b *shootBuilder) spec() (gardencorev1beta1.ShootSpec, error) {
	s := b.rt.Spec.Shoot
	pools, err := b.workers()
	if err != nil {
		return gardencorev1beta1.ShootSpec{}, err
	}
	configs, err := b.providerConfigs(pools)
	if err != nil {
		return gardencorev1beta1.ShootSpec{}, err
	}
	tenant, err := b.opts.AuditLog.tenant(b.rt)
	if err != nil {
		return gardencorev1beta1.ShootSpec{}, err
	}
	kubernetes := b.kubernetes(tenant)
	spec := gardencorev1beta1.ShootSpec{
		// The reference, not the cloudProfileName Gardener forbids from Kubernetes 1.34 on.
		CloudProfile: &gardencorev1beta1.CloudProfileReference{Kind: cloudProfileKind, Name: b.profile},
		Region:       s.Region,
		Kubernetes:   kubernetes,
		Networking:   networking(s.Networking, b.opts.DualStackDisabled),
		Provider: gardencorev1beta1.Provider{
			Type:                 b.rt.Spec.Shoot.Provider.Type,
			ControlPlaneConfig:   configs.ControlPlane,
			InfrastructureConfig: configs.Infrastructure,
			Workers:              pools,
			// Nobody logs in to a runtime's nodes.
			WorkersSettings: &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}},
		},
		ControlPlane:       controlPlane(s.ControlPlane),
		SeedSelector:       seedSelector(s),
		Maintenance:        b.maintenance(),
		AccessRestrictions: accessRestrictions(b.rt),
		Tolerations:        b.tolerations(),
	}
	b.dns(&spec)
	if err := b.checkRegistryCaches(); err != nil {
		return gardencorev1beta1.ShootSpec{}, err
	}
	spec.Extensions, err = b.extensions(spec.DNS, kubernetes.Version, tenant)
	if err != nil {
		return gardencorev1beta1.ShootSpec{}, err
	}
	spec.Resources = b.resources(spec.DNS, tenant)
	if s.Purpose != "" {
		spec.Purpose = ptr.To(gardencorev1beta1.ShootPurpose(s.Purpose))
	}
	if b.useCredentialsBinding(kubernetes.Version) {
		spec.CredentialsBindingName = nonEmpty(s.SecretBindingName)
	} else {
		spec.SecretBindingName = nonEmpty(s.SecretBindingName) //nolint:staticcheck // SA1019: below Kubernetes 1.34 shoots on secret bindings still name them here.
	}
	return spec, nil
}

// useCredentialsBinding reports whether the Runtime's binding goes into credentialsBindingName
// rather than secretBindingName: from Kubernetes 1.34 on Gardener forbids secretBindingName, and
// a shoot already on a credentials binding cannot go back. Gardener allows the move from a
// secret binding to a credentials binding of the same name during the upgrade to 1.34; before
// that, a landscape that enables credentials bindings puts new shoots on them, while shoots on
// a secret binding stay there.
func (b *shootBuilder) useCredentialsBinding(version string) bool {
	if b.current != nil && b.current.Spec.CredentialsBindingName != nil {
		return true
	}
	if b.opts.CredentialsBinding && (b.current == nil || b.current.Spec.SecretBindingName == nil) { //nolint:staticcheck // SA1019: a shoot on a secret binding moves only with its upgrade to 1.34.
		return true
	}
	return version != "" && !versionLess(version, credentialsBindingVersion)
}

// kubernetes sets the version (the Runtime's or the default, never below what the shoot runs),
// points the API server at the structured authentication ConfigMap and adds the landscape's API
// server and kubelet settings. The legacy oidcConfig is never set: Gardener forbids it from
// Kubernetes 1.32 on.
func (b *shootBuilder) kubernetes(tenant *AuditLogTenant) gardencorev1beta1.Kubernetes {
	in := b.rt.Spec.Shoot.Kubernetes
	version := b.opts.DefaultKubernetesVersion
	if in.Version != nil && *in.Version != "" {
		version = *in.Version
	}
	if b.current != nil {
		version = b.notBelow("Kubernetes", version, b.current.Spec.Kubernetes.Version)
	}
	out := gardencorev1beta1.Kubernetes{Version: version, KubeAPIServer: &gardencorev1beta1.KubeAPIServerConfig{}}
	if b.auth != nil {
		out.KubeAPIServer.StructuredAuthentication = &gardencorev1beta1.StructuredAuthentication{ConfigMapName: b.auth.Name}
	}
	b.kubeAPIServer(out.KubeAPIServer, version, tenant)
	if gates := cloneNonEmpty(b.opts.KubeletFeatureGates); gates != nil {
		out.Kubelet = &gardencorev1beta1.KubeletConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: gates}}
	}
	return out
}

// notBelow returns requested, or running when the shoot already runs a higher version, and
// records that it kept the higher one. An empty or unparsable version is left to Gardener.
func (b *shootBuilder) notBelow(what, requested, running string) string {
	if !versionLess(requested, running) {
		return requested
	}
	b.kept = append(b.kept, KeptVersion{What: what, Requested: requested, Kept: running})
	return running
}

// networking copies the network plugin (calico by default) and the CIDRs, and asks for IPv4
// and IPv6 when the Runtime does and the landscape allows it.
func networking(in infrav1.Networking, dualStackDisabled bool) *gardencorev1beta1.Networking {
	networkType := DefaultNetworkingType
	if in.Type != nil && *in.Type != "" {
		networkType = *in.Type
	}
	out := &gardencorev1beta1.Networking{
		Type:     ptr.To(networkType),
		Pods:     nonEmpty(in.Pods),
		Nodes:    nonEmpty(in.Nodes),
		Services: nonEmpty(in.Services),
	}
	if ptr.Deref(in.DualStack, false) && !dualStackDisabled {
		out.IPFamilies = []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4, gardencorev1beta1.IPFamilyIPv6}
	}
	return out
}

// workers converts the worker pools followed by the additional worker pools.
func (b *shootBuilder) workers() ([]gardencorev1beta1.Worker, error) {
	in := b.rt.Spec.Shoot.Provider
	pools := slices.Clone(in.Workers)
	if in.AdditionalWorkers != nil {
		pools = append(pools, *in.AdditionalWorkers...)
	}
	out := make([]gardencorev1beta1.Worker, 0, len(pools))
	for i := range pools {
		w, err := b.worker(&pools[i])
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// worker converts one worker pool. The Runtime's Worker has Gardener's field names and every
// field of Gardener's Worker, so the conversion goes through JSON and cannot drop a field;
// then the defaults are filled in: containerd, the default machine image, and never a machine
// image version below the one the pool runs.
func (b *shootBuilder) worker(in *infrav1.Worker) (gardencorev1beta1.Worker, error) {
	var out gardencorev1beta1.Worker
	if err := convertJSON(in, &out); err != nil {
		return out, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("convert worker pool %s: %w", in.Name, err))
	}
	if out.CRI == nil {
		out.CRI = &gardencorev1beta1.CRI{}
	}
	if out.CRI.Name == "" {
		out.CRI.Name = gardencorev1beta1.CRINameContainerD
	}
	out.Machine.Image = machineImage(out.Machine.Image, b.opts)
	out.MachineControllerManagerSettings = drainSettings(out.MachineControllerManagerSettings, b.opts.WorkerMachineControllerManager)
	if err := checkControlPlanePool(b.rt, &out); err != nil {
		return out, err
	}
	if b.rt.Spec.Shoot.Provider.Type == "aws" {
		cfg, err := b.awsWorkerProviderConfig(out.Name, out.ProviderConfig)
		if err != nil {
			return out, err
		}
		out.ProviderConfig = cfg
	}
	if img := out.Machine.Image; img != nil && img.Version != nil {
		if running := b.runningImageVersion(out.Name, img.Name); running != "" {
			img.Version = ptr.To(b.notBelow(fmt.Sprintf("worker pool %s machine image %s", out.Name, img.Name), *img.Version, running))
		}
	}
	return out, nil
}

// drainSettings fills the pool's unset drain settings from the landscape's, as upstream does;
// a pool's own settings win.
func drainSettings(in, landscape *gardencorev1beta1.MachineControllerManagerSettings) *gardencorev1beta1.MachineControllerManagerSettings {
	if landscape == nil {
		return in
	}
	out := in
	if out == nil {
		out = &gardencorev1beta1.MachineControllerManagerSettings{}
	}
	if out.MaxEvictRetries == nil && landscape.MaxEvictRetries != nil {
		out.MaxEvictRetries = ptr.To(*landscape.MaxEvictRetries)
	}
	if out.MachineDrainTimeout == nil && landscape.MachineDrainTimeout != nil {
		out.MachineDrainTimeout = landscape.MachineDrainTimeout.DeepCopy()
	}
	return out
}

// runningImageVersion returns the image version the current shoot's pool runs, when the pool
// exists and runs the same image; "" otherwise.
func (b *shootBuilder) runningImageVersion(pool, image string) string {
	if b.current == nil {
		return ""
	}
	for _, w := range b.current.Spec.Provider.Workers {
		if w.Name == pool && w.Machine.Image != nil && w.Machine.Image.Name == image && w.Machine.Image.Version != nil {
			return *w.Machine.Image.Version
		}
	}
	return ""
}

// machineImage fills in the default image of a pool that names none. A pool that names the
// default image without a version gets the default version; any other image without a version
// is left for Gardener to default.
func machineImage(in *gardencorev1beta1.ShootMachineImage, opts ConvertOptions) *gardencorev1beta1.ShootMachineImage {
	if in == nil || in.Name == "" {
		if opts.DefaultMachineImage == "" {
			return in
		}
		return &gardencorev1beta1.ShootMachineImage{
			Name:    opts.DefaultMachineImage,
			Version: nonEmpty(opts.DefaultMachineImageVersion),
		}
	}
	if (in.Version == nil || *in.Version == "") && in.Name == opts.DefaultMachineImage {
		in.Version = nonEmpty(opts.DefaultMachineImageVersion)
	}
	return in
}

// providerConfigs returns the infrastructure and control plane configs: the Runtime's own when
// it carries them, else the ones the shoot has (extended by zones the Runtime added), else new
// ones with the layout upstream's shoots have.
func (b *shootBuilder) providerConfigs(pools []gardencorev1beta1.Worker) (provider.Configs, error) {
	in := b.rt.Spec.Shoot.Provider
	if err := b.checkInfrastructureIDs(in.InfrastructureConfig); err != nil {
		return provider.Configs{}, err
	}
	if in.InfrastructureConfig != nil && in.ControlPlaneConfig != nil {
		return provider.Configs{Infrastructure: in.InfrastructureConfig.DeepCopy(), ControlPlane: in.ControlPlaneConfig.DeepCopy()}, nil
	}
	var existing provider.Configs
	if b.current != nil {
		existing = provider.Configs{
			Infrastructure: b.current.Spec.Provider.InfrastructureConfig.DeepCopy(),
			ControlPlane:   b.current.Spec.Provider.ControlPlaneConfig.DeepCopy(),
		}
	}
	nw := b.rt.Spec.Shoot.Networking
	out, err := provider.Build(provider.Input{
		Type:       b.rt.Spec.Shoot.Provider.Type,
		Nodes:      nw.Nodes,
		Zones:      zonesOf(pools),
		DualStack:  ptr.Deref(nw.DualStack, false),
		VPCNetwork: ptr.Deref(nw.VPCNetwork, ""),
	}, existing)
	if err != nil {
		return provider.Configs{}, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("provider configs of runtime %s: %w", b.rt.Name, err))
	}
	if in.InfrastructureConfig != nil {
		out.Infrastructure = in.InfrastructureConfig.DeepCopy()
	}
	if in.ControlPlaneConfig != nil {
		out.ControlPlane = in.ControlPlaneConfig.DeepCopy()
	}
	return out, nil
}

// zonesOf returns the union of the pools' zones, in order of first appearance.
func zonesOf(pools []gardencorev1beta1.Worker) []string {
	var zones []string
	for _, w := range pools {
		for _, z := range w.Zones {
			if !slices.Contains(zones, z) {
				zones = append(zones, z)
			}
		}
	}
	return zones
}

// controlPlane copies the high availability setting; nil when the Runtime has none.
func controlPlane(in *infrav1.ControlPlane) *gardencorev1beta1.ControlPlane {
	if in == nil || in.HighAvailability == nil {
		return nil
	}
	return &gardencorev1beta1.ControlPlane{
		HighAvailability: &gardencorev1beta1.HighAvailability{
			FailureTolerance: gardencorev1beta1.FailureTolerance{
				Type: gardencorev1beta1.FailureToleranceType(in.HighAvailability.FailureTolerance.Type),
			},
		},
	}
}

// seedSelector keeps the seed in the shoot's region when the Runtime enforces its seed
// location: a label selector on the Seed label seed.gardener.cloud/region, as upstream KIM does.
// providerTypes stays unset, so Gardener's default (seeds of the shoot's own provider type)
// still applies; later Gardener versions deprecate that field in favour of labels anyway.
func seedSelector(in infrav1.RuntimeShoot) *gardencorev1beta1.SeedSelector {
	if in.EnforceSeedLocation == nil || !*in.EnforceSeedLocation {
		return nil
	}
	return &gardencorev1beta1.SeedSelector{
		LabelSelector: metav1.LabelSelector{
			MatchLabels: map[string]string{LabelSeedRegion: in.Region},
		},
	}
}

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

// aclConfig is the ACL extension's providerConfig.
type aclConfig struct {
	Rule aclRule `json:"rule"`
}

type aclRule struct {
	Action string   `json:"action"`
	Type   string   `json:"type"`
	CIDRs  []string `json:"cidrs"`
}

// rawJSON encodes a providerConfig. The types passed in hold only strings, booleans and string
// slices, which always encode.
func rawJSON(v any) *runtime.RawExtension {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode providerConfig %T: %v", v, err))
	}
	return &runtime.RawExtension{Raw: data}
}

// convertJSON copies in into out through their JSON encoding, for types with the same field
// names.
func convertJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode %T: %w", in, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %T: %w", out, err)
	}
	return nil
}

// versionLess reports whether version a is below version b. Versions that do not parse (or are
// empty) are never less, so they are left for Gardener to judge.
func versionLess(a, b string) bool {
	va, errA := utilversion.ParseGeneric(a)
	vb, errB := utilversion.ParseGeneric(b)
	if errA != nil || errB != nil {
		return false
	}
	return va.LessThan(vb)
}

// nonEmpty returns a pointer to s, or nil when s is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// emptyToNil returns nil for an empty map, so an empty map is not applied as a field.
func emptyToNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
