package gardener

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
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
	// DefaultNetworkingType is the network plugin used when the Runtime names none.
	DefaultNetworkingType = "calico"
)

// Reasons of the terminal errors ShootFromRuntime returns.
const (
	// ReasonUnsupportedProvider is the reason when the Runtime's provider type is unknown.
	ReasonUnsupportedProvider = "UnsupportedProvider"
	// ReasonInvalidRuntime is the reason when the Runtime is nil or has no shoot name.
	ReasonInvalidRuntime = "InvalidRuntime"
	// ReasonInvalidConvertOptions is the reason when the ConvertOptions lack the namespace.
	ReasonInvalidConvertOptions = "InvalidConvertOptions"
)

// Errors that ShootFromRuntime wraps, for errors.Is.
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

// provider is what a Runtime provider type becomes in a Shoot.
type provider struct {
	// shootType is spec.provider.type.
	shootType string
	// cloudProfile is spec.cloudProfileName.
	cloudProfile string
}

// providers maps a Runtime's spec.shoot.provider.type to the Shoot's provider type and cloud
// profile.
var providers = map[string]provider{
	"aws":       {shootType: "aws", cloudProfile: "aws"},
	"azure":     {shootType: "azure", cloudProfile: "az"},
	"gcp":       {shootType: "gcp", cloudProfile: "gcp"},
	"openstack": {shootType: "openstack", cloudProfile: "openstack"},
}

// ConvertOptions holds what ShootFromRuntime needs beyond the Runtime.
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
}

// ShootFromRuntime returns the desired Shoot for rt: the fields the manager owns, ready for a
// server-side apply (TypeMeta is set), and nothing Gardener defaults or writes itself. The Shoot
// is named after rt.Spec.Shoot.Name, never generated, so a create whose reply was lost finds the
// same Shoot again instead of creating a second one. The result shares no memory with rt.
//
// An unknown provider type, a nil Runtime, an empty shoot name or an empty opts.Namespace give a
// terminal error (retry.Terminal): no retry can fix them.
//
// The additional OIDC providers are not part of the Shoot: the shoot-oidc-service extension the
// Shoot enables serves them as OpenIDConnect resources inside the runtime cluster, which
// OpenIDConnects builds.
func ShootFromRuntime(rt *infrav1.Runtime, opts ConvertOptions) (*gardencorev1beta1.Shoot, error) {
	if rt == nil {
		return nil, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("convert runtime: %w", ErrInvalidRuntime))
	}
	if rt.Spec.Shoot.Name == "" {
		return nil, retry.Terminal(ReasonInvalidRuntime,
			fmt.Errorf("convert runtime %s: spec.shoot.name is empty: %w", rt.Name, ErrInvalidRuntime))
	}
	if opts.Namespace == "" {
		return nil, retry.Terminal(ReasonInvalidConvertOptions,
			fmt.Errorf("convert runtime %s: %w", rt.Name, ErrMissingNamespace))
	}
	prov, ok := providers[rt.Spec.Shoot.Provider.Type]
	if !ok {
		return nil, retry.Terminal(ReasonUnsupportedProvider,
			fmt.Errorf("convert runtime %s: provider type %q: %w", rt.Name, rt.Spec.Shoot.Provider.Type, ErrUnsupportedProvider))
	}
	return &gardencorev1beta1.Shoot{
		TypeMeta: metav1.TypeMeta{
			APIVersion: gardencorev1beta1.SchemeGroupVersion.String(),
			Kind:       "Shoot",
		},
		ObjectMeta: objectMeta(rt, opts),
		Spec:       shootSpec(rt, prov, opts),
	}, nil
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
	annotations := map[string]string{}
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

// shootSpec builds the Shoot's spec.
func shootSpec(rt *infrav1.Runtime, prov provider, opts ConvertOptions) gardencorev1beta1.ShootSpec {
	s := rt.Spec.Shoot
	spec := gardencorev1beta1.ShootSpec{
		CloudProfileName:  ptr.To(prov.cloudProfile),
		Region:            s.Region,
		SecretBindingName: nonEmpty(s.SecretBindingName),
		Kubernetes:        kubernetes(s.Kubernetes, opts),
		Networking:        networking(s.Networking),
		Provider: gardencorev1beta1.Provider{
			Type:                 prov.shootType,
			ControlPlaneConfig:   s.Provider.ControlPlaneConfig.DeepCopy(),
			InfrastructureConfig: s.Provider.InfrastructureConfig.DeepCopy(),
			Workers:              workers(s.Provider, opts),
		},
		ControlPlane: controlPlane(s.ControlPlane),
		SeedSelector: seedSelector(s),
		// Kyma, not Gardener's maintenance, decides when versions change.
		Maintenance: &gardencorev1beta1.Maintenance{
			AutoUpdate: &gardencorev1beta1.MaintenanceAutoUpdate{
				KubernetesVersion:   false,
				MachineImageVersion: ptr.To(false),
			},
		},
		Extensions: extensions(rt),
	}
	if s.Purpose != "" {
		spec.Purpose = ptr.To(gardencorev1beta1.ShootPurpose(s.Purpose))
	}
	return spec
}

// kubernetes sets the version (the Runtime's or the default) and the OIDC provider.
func kubernetes(in infrav1.Kubernetes, opts ConvertOptions) gardencorev1beta1.Kubernetes {
	out := gardencorev1beta1.Kubernetes{Version: opts.DefaultKubernetesVersion}
	if in.Version != nil && *in.Version != "" {
		out.Version = *in.Version
	}
	if oidc := oidcConfig(in.KubeAPIServer.OidcConfig); oidc != nil {
		// Deprecated in Gardener for Kubernetes >= 1.32 in favour of structured authentication,
		// but it is the field the Runtime API mirrors and the one Gardener v1.110 accepts for
		// the versions runtimes use today.
		out.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{OIDCConfig: oidc} //nolint:staticcheck // SA1019: see the comment above.
	}
	return out
}

// oidcConfig copies the Runtime's OIDC provider; nil when the Runtime sets none of its fields.
func oidcConfig(in infrav1.OIDCConfig) *gardencorev1beta1.OIDCConfig {
	if reflect.ValueOf(in).IsZero() {
		return nil
	}
	return &gardencorev1beta1.OIDCConfig{
		CABundle:       clone(in.CABundle),
		ClientID:       clone(in.ClientID),
		GroupsClaim:    clone(in.GroupsClaim),
		GroupsPrefix:   clone(in.GroupsPrefix),
		IssuerURL:      clone(in.IssuerURL),
		RequiredClaims: maps.Clone(in.RequiredClaims),
		SigningAlgs:    slices.Clone(in.SigningAlgs),
		UsernameClaim:  clone(in.UsernameClaim),
		UsernamePrefix: clone(in.UsernamePrefix),
	}
}

// networking copies the network plugin (calico by default) and the CIDRs.
func networking(in infrav1.Networking) *gardencorev1beta1.Networking {
	networkType := DefaultNetworkingType
	if in.Type != nil && *in.Type != "" {
		networkType = *in.Type
	}
	return &gardencorev1beta1.Networking{
		Type:     ptr.To(networkType),
		Pods:     nonEmpty(in.Pods),
		Nodes:    nonEmpty(in.Nodes),
		Services: nonEmpty(in.Services),
	}
}

// workers converts the worker pools followed by the additional worker pools.
func workers(in infrav1.Provider, opts ConvertOptions) []gardencorev1beta1.Worker {
	pools := slices.Clone(in.Workers)
	if in.AdditionalWorkers != nil {
		pools = append(pools, *in.AdditionalWorkers...)
	}
	out := make([]gardencorev1beta1.Worker, 0, len(pools))
	for i := range pools {
		out = append(out, worker(&pools[i], opts))
	}
	return out
}

// worker converts one worker pool.
func worker(in *infrav1.Worker, opts ConvertOptions) gardencorev1beta1.Worker {
	criName := gardencorev1beta1.CRINameContainerD
	if in.CRI != nil && in.CRI.Name != "" {
		criName = gardencorev1beta1.CRIName(in.CRI.Name)
	}
	return gardencorev1beta1.Worker{
		Name: in.Name,
		Machine: gardencorev1beta1.Machine{
			Type:         in.Machine.Type,
			Image:        machineImage(in.Machine.Image, opts),
			Architecture: clone(in.Machine.Architecture),
		},
		Minimum:        in.Minimum,
		Maximum:        in.Maximum,
		MaxSurge:       clone(in.MaxSurge),
		MaxUnavailable: clone(in.MaxUnavailable),
		Volume:         volume(in.Volume),
		Zones:          slices.Clone(in.Zones),
		CRI:            &gardencorev1beta1.CRI{Name: criName},
		ProviderConfig: in.ProviderConfig.DeepCopy(),
	}
}

// machineImage copies the pool's image, or falls back to the default image. A pool that names
// the default image without a version gets the default version; any other image without a
// version is left for Gardener to default.
func machineImage(in *infrav1.ShootMachineImage, opts ConvertOptions) *gardencorev1beta1.ShootMachineImage {
	if in == nil || in.Name == "" {
		if opts.DefaultMachineImage == "" {
			return nil
		}
		return &gardencorev1beta1.ShootMachineImage{
			Name:    opts.DefaultMachineImage,
			Version: nonEmpty(opts.DefaultMachineImageVersion),
		}
	}
	out := &gardencorev1beta1.ShootMachineImage{Name: in.Name}
	switch {
	case in.Version != nil && *in.Version != "":
		out.Version = ptr.To(*in.Version)
	case in.Name == opts.DefaultMachineImage:
		out.Version = nonEmpty(opts.DefaultMachineImageVersion)
	}
	return out
}

// volume copies a pool's root disk; nil stays nil.
func volume(in *infrav1.Volume) *gardencorev1beta1.Volume {
	if in == nil {
		return nil
	}
	return &gardencorev1beta1.Volume{
		Type:       clone(in.Type),
		VolumeSize: in.Size,
		Encrypted:  clone(in.Encrypted),
	}
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

// extensions lists the Gardener extensions the Shoot configures: always the networking filter
// and the OIDC service, and the ACL when the Runtime restricts API server access. An extension
// the manager stops listing is removed by the next server-side apply, as it owns the entry.
func extensions(rt *infrav1.Runtime) []gardencorev1beta1.Extension {
	out := []gardencorev1beta1.Extension{
		networkingFilter(rt.Spec.Security.Networking.Filter),
		{Type: ExtensionOIDCService, Disabled: ptr.To(false)},
	}
	if acl := rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL; acl != nil {
		out = append(out, aclExtension(acl))
	}
	return out
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

// aclExtension allows only the Runtime's networks to reach the API server: the ACL extension
// takes one ALLOW rule on the client's address.
func aclExtension(in *infrav1.ACL) gardencorev1beta1.Extension {
	return gardencorev1beta1.Extension{
		Type: ExtensionACL,
		ProviderConfig: rawJSON(aclConfig{Rule: aclRule{
			Action: "ALLOW",
			Type:   "remote_ip",
			CIDRs:  slices.Clone(in.AllowedCIDRs),
		}}),
	}
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

// clone returns a pointer to a copy of *p, or nil.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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
