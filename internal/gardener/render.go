package gardener

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// RenderOptions holds what Render needs beyond the Runtime: the landscape defaults.
type RenderOptions struct {
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
func Render(rt *infrav1.Runtime, current *gardencorev1beta1.Shoot, opts RenderOptions) (Rendered, error) {
	if rt == nil {
		return Rendered{}, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("render runtime: %w", ErrInvalidRuntime))
	}
	if rt.Spec.Shoot.Name == "" {
		return Rendered{}, retry.Terminal(ReasonInvalidRuntime,
			fmt.Errorf("render runtime %s: spec.shoot.name is empty: %w", rt.Name, ErrInvalidRuntime))
	}
	if opts.Namespace == "" {
		return Rendered{}, retry.Terminal(ReasonInvalidRenderOptions,
			fmt.Errorf("render runtime %s: %w", rt.Name, ErrMissingNamespace))
	}
	profile, ok := cloudProfiles[rt.Spec.Shoot.Provider.Type]
	if !ok {
		return Rendered{}, retry.Terminal(ReasonUnsupportedProvider,
			fmt.Errorf("render runtime %s: provider type %q: %w", rt.Name, rt.Spec.Shoot.Provider.Type, ErrUnsupportedProvider))
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

// Reasons of the terminal errors Render returns.
const (
	// ReasonUnsupportedProvider is the reason when the Runtime's provider type is unknown.
	ReasonUnsupportedProvider = "UnsupportedProvider"
	// ReasonInvalidRuntime is the reason when the Runtime is nil or has no shoot name.
	ReasonInvalidRuntime = "InvalidRuntime"
	// ReasonInvalidRenderOptions is the reason when the RenderOptions lack the namespace. Its
	// value keeps the old name: it shows in Runtime status and in metrics.
	ReasonInvalidRenderOptions = "InvalidConvertOptions"
)

// Errors that Render wraps, for errors.Is.
var (
	// ErrUnsupportedProvider means the Runtime's provider type has no Gardener counterpart here.
	ErrUnsupportedProvider = errors.New("unsupported provider type")
	// ErrInvalidRuntime means the Runtime cannot describe a Shoot (nil or without shoot name).
	ErrInvalidRuntime = errors.New("invalid runtime")
	// ErrMissingNamespace means RenderOptions.Namespace is empty.
	ErrMissingNamespace = errors.New("missing project namespace")
)

// The landscape wins over the Runtime. A Runtime's provider configurations reach the provider
// extension only through an allowlist: no instance profile, no instance metadata settings
// weaker than the landscape's, no ids of existing infrastructure the shoot does not already
// use, no registry cache credentials the landscape owns and no control plane pool. A refused
// field is a terminal user error that names it.

// ErrFieldNotAllowed means the Runtime sets a field the landscape does not allow it to set.
var ErrFieldNotAllowed = errors.New("not allowed by the landscape")

// refused returns the terminal error for a refused field.
func refused(rt *infrav1.Runtime, path, why string) error {
	return retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("runtime %s: %s: %s: %w", rt.Name, path, why, ErrFieldNotAllowed))
}

// shootBuilder carries one render's inputs and collects the versions it kept.
type shootBuilder struct {
	rt      *infrav1.Runtime
	current *gardencorev1beta1.Shoot
	opts    RenderOptions
	profile string
	auth    *corev1.ConfigMap
	kept    []KeptVersion
}

// spec builds the Shoot's spec, section by section. Each section has its own file: workers.go
// and provider.go, auditlog.go, kubernetes.go, networking.go, placement.go, maintenance.go,
// dns.go, extensions.go and acl.go, resources.go.
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

// notBelow returns requested, or running when the shoot already runs a higher version, and
// records that it kept the higher one. An empty or unparsable version is left to Gardener.
func (b *shootBuilder) notBelow(what, requested, running string) string {
	if !versionLess(requested, running) {
		return requested
	}
	b.kept = append(b.kept, KeptVersion{What: what, Requested: requested, Kept: running})
	return running
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
