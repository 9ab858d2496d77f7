package admission

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"github.com/gardener/gardener/pkg/apis/utils/timewindow"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validate is the registry strategy's Validate (create) or ValidateUpdate:
// the part of Gardener's pkg/api/core/validation that concerns the fields a
// shoot of Infrastructure Manager sets. Its errors become 422 Invalid.
func (c *check) validate() field.ErrorList {
	if c.op == Create {
		return validateShoot(c.shoot)
	}
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateObjectMetaUpdate(&c.shoot.ObjectMeta, &c.old.ObjectMeta, field.NewPath("metadata"))...)
	errs = append(errs, validateSpecUpdate(&c.shoot.Spec, &c.old.Spec, field.NewPath("spec"))...)
	return append(errs, validateShoot(c.shoot)...)
}

// validateShoot mirrors ValidateShoot.
func validateShoot(s *gardencore.Shoot) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateObjectMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSLabel, field.NewPath("metadata"))...)
	errs = append(errs, validateNameConsecutiveHyphens(s.Name, field.NewPath("metadata", "name"))...)
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateNameConsecutiveHyphens: Gardener derives the names of a shoot's
// technical namespace and DNS records from its name, so it refuses two
// hyphens in a row, which a DNS label allows.
func validateNameConsecutiveHyphens(name string, path *field.Path) field.ErrorList {
	if strings.Contains(name, "--") {
		return field.ErrorList{field.Invalid(path, name, "name may not contain two consecutive hyphens")}
	}
	return nil
}

// validateSpec mirrors the checks of ValidateShootSpec, in its order.
func validateSpec(spec *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateCloudProfileReference(spec.CloudProfile, spec.CloudProfileName, spec.Kubernetes.Version, path)...) //nolint:staticcheck // SA1019: Gardener still validates the deprecated name (forbidden from Kubernetes 1.34).
	errs = append(errs, validateProvider(spec, path.Child("provider"))...)
	errs = append(errs, validateDNS(spec.DNS, spec.Kubernetes.Version, path.Child("dns"))...)
	errs = append(errs, validateExtensions(spec.Extensions, path.Child("extensions"))...)
	errs = append(errs, validateResources(spec.Resources, path.Child("resources"))...)
	errs = append(errs, validateKubernetes(spec.Kubernetes, len(spec.Provider.Workers) > 0, path.Child("kubernetes"))...)
	errs = append(errs, validateMaintenance(spec.Maintenance, path.Child("maintenance"))...)
	if spec.Region == "" {
		errs = append(errs, field.Required(path.Child("region"), "must specify a region"))
	}
	errs = append(errs, validateBindings(spec, path)...)
	return append(errs, validateTolerations(spec.Tolerations, path.Child("tolerations"))...)
}

// validateBindings: a shoot with workers names exactly one of
// secretBindingName and credentialsBindingName, from Kubernetes 1.34 the
// latter.
func validateBindings(spec *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	if len(spec.Provider.Workers) == 0 {
		return nil
	}
	var errs field.ErrorList
	secretBinding, credentialsBinding := ptr.Deref(spec.SecretBindingName, ""), ptr.Deref(spec.CredentialsBindingName, "") //nolint:staticcheck // SA1019: Gardener still validates the deprecated binding (forbidden from Kubernetes 1.34).
	switch {
	case secretBinding == "" && credentialsBinding == "":
		errs = append(errs, field.Required(path.Child("secretBindingName"), "must be set when credentialsBindingName is not"))
	case secretBinding != "" && credentialsBinding != "":
		errs = append(errs, field.Forbidden(path.Child("secretBindingName"), "is incompatible with credentialsBindingName"))
	}
	if secretBinding != "" && spec.Kubernetes.Version != "" && atLeast(spec.Kubernetes.Version, 1, 34) {
		errs = append(errs, field.Forbidden(path.Child("secretBindingName"), "for Kubernetes versions >= 1.34, secretBindingName field is no longer supported, use spec.credentialsBindingName instead"))
	}
	return errs
}

// validateCloudProfileReference mirrors ValidateCloudProfileReference.
func validateCloudProfileReference(ref *gardencore.CloudProfileReference, name *string, version string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if version != "" && atLeast(version, 1, 34) && ptr.Deref(name, "") != "" {
		errs = append(errs, field.Forbidden(path.Child("cloudProfileName"), "for Kubernetes version >= 1.34, cloudProfileName field is no longer supported, use spec.cloudProfile.name instead"))
	}
	path = path.Child("cloudProfile")
	if ref == nil && name != nil {
		ref = &gardencore.CloudProfileReference{Kind: v1beta1constants.CloudProfileReferenceKindCloudProfile, Name: *name}
	}
	if ref == nil || ref.Name == "" {
		return append(errs, field.Required(path.Child("name"), "must specify a cloud profile"))
	}
	kinds := sets.New(v1beta1constants.CloudProfileReferenceKindCloudProfile, v1beta1constants.CloudProfileReferenceKindNamespacedCloudProfile)
	if !kinds.Has(ref.Kind) {
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, sets.List(kinds)))
	}
	return errs
}

// validateProvider mirrors the worker checks of validateProvider.
func validateProvider(spec *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Provider.Type == "" {
		errs = append(errs, field.Required(path.Child("type"), "must specify a provider type"))
	}
	for i, w := range spec.Provider.Workers {
		errs = append(errs, validateWorker(w, spec.Kubernetes, path.Child("workers").Index(i))...)
	}
	return errs
}

// validateWorker mirrors the checks of ValidateWorker on the machine, the
// pool size and the kubelet of a pool with Kubernetes settings of its own.
func validateWorker(w gardencore.Worker, k gardencore.Kubernetes, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if w.Machine.Type == "" {
		errs = append(errs, field.Required(path.Child("machine", "type"), "must specify a machine type"))
	}
	errs = append(errs, validateMachineImage(w.Machine.Image, path.Child("machine", "image"))...)
	if w.ControlPlane != nil {
		// A pool hosting the shoot's own control plane makes it a self-hosted shoot, which
		// gardenadm creates; a shoot whose control plane runs on a seed cannot have one.
		errs = append(errs, field.Forbidden(path.Child("controlPlane"), "control plane worker pools are only supported for self-hosted shoots"))
	}
	if w.Minimum < 0 {
		errs = append(errs, field.Invalid(path.Child("minimum"), w.Minimum, "minimum value must not be negative"))
	}
	if w.Maximum < 0 {
		errs = append(errs, field.Invalid(path.Child("maximum"), w.Maximum, "maximum value must not be negative"))
	}
	if w.Maximum < w.Minimum {
		errs = append(errs, field.Forbidden(path.Child("maximum"), "maximum value must not be less than minimum value"))
	}
	if w.Kubernetes == nil {
		return errs
	}
	version, kubelet := k.Version, k.Kubelet
	if w.Kubernetes.Version != nil {
		version = *w.Kubernetes.Version
	}
	if w.Kubernetes.Kubelet != nil {
		kubelet = w.Kubernetes.Kubelet
	}
	if kubelet != nil {
		errs = append(errs, validateFeatureGates(kubelet.FeatureGates, version, path.Child("kubernetes", "kubelet", "featureGates"))...)
	}
	return errs
}

// validateMachineImage: a pool names an image and its version.
func validateMachineImage(image *gardencore.ShootMachineImage, path *field.Path) field.ErrorList {
	if image == nil {
		return field.ErrorList{field.Required(path, "must specify a machine image")}
	}
	var errs field.ErrorList
	if image.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must specify a machine image name"))
	}
	if image.Version == "" {
		errs = append(errs, field.Required(path.Child("version"), "must specify a machine image version"))
	}
	return errs
}

// validateKubernetes mirrors validateKubernetes: the version, the parts of
// ValidateKubeAPIServer that concern the fields a shoot of Infrastructure
// Manager sets, and the kubelet's feature gates of a shoot with workers.
func validateKubernetes(k gardencore.Kubernetes, hasWorkers bool, path *field.Path) field.ErrorList {
	if k.Version == "" {
		return field.ErrorList{field.Required(path.Child("version"), "kubernetes version must not be empty")}
	}
	errs := validateKubeAPIServer(k.KubeAPIServer, k.Version, path.Child("kubeAPIServer"))
	if hasWorkers && k.Kubelet != nil {
		errs = append(errs, validateFeatureGates(k.Kubelet.FeatureGates, k.Version, path.Child("kubelet", "featureGates"))...)
	}
	return errs
}

// validateKubeAPIServer mirrors ValidateKubeAPIServer in its order: OIDC,
// the audit policy reference, structured authentication, the service
// account token bounds and the feature gates.
func validateKubeAPIServer(api *gardencore.KubeAPIServerConfig, version string, path *field.Path) field.ErrorList {
	if api == nil {
		return nil
	}
	errs := validateOIDCConfig(api, version, path)
	if audit := api.AuditConfig; audit != nil && audit.AuditPolicy != nil && audit.AuditPolicy.ConfigMapRef != nil {
		errs = append(errs, validateObjectReferenceName(audit.AuditPolicy.ConfigMapRef.Name, audit.AuditPolicy.ConfigMapRef.Namespace, path.Child("auditConfig", "auditPolicy", "configMapRef"))...)
	}
	errs = append(errs, validateStructuredAuthentication(api, path)...)
	errs = append(errs, validateServiceAccountConfig(api.ServiceAccountConfig, path.Child("serviceAccountConfig"))...)
	return append(errs, validateFeatureGates(api.FeatureGates, version, path.Child("featureGates"))...)
}

// validateOIDCConfig: the deprecated oidcConfig is refused from Kubernetes
// 1.32 and needs a client ID and issuer below.
func validateOIDCConfig(api *gardencore.KubeAPIServerConfig, version string, path *field.Path) field.ErrorList {
	oidc := api.OIDCConfig //nolint:staticcheck // SA1019: Gardener refuses the deprecated oidcConfig from Kubernetes 1.32 and validates it below.
	if oidc == nil {
		return nil
	}
	if atLeast(version, 1, 32) {
		return field.ErrorList{field.Invalid(path.Child("oidcConfig"), *oidc, "for Kubernetes versions >= 1.32, oidcConfig field is no longer supported")}
	}
	var errs field.ErrorList
	oidcPath := path.Child("oidcConfig")
	switch {
	case oidc.ClientID == nil:
		errs = append(errs, field.Required(oidcPath.Child("clientID"), "clientID must be set when oidcConfig is provided"))
	case *oidc.ClientID == "":
		errs = append(errs, field.Required(oidcPath.Child("clientID"), "clientID cannot be empty"))
	}
	switch {
	case oidc.IssuerURL == nil:
		errs = append(errs, field.Required(oidcPath.Child("issuerURL"), "issuerURL must be set when oidcConfig is provided"))
	case *oidc.IssuerURL == "":
		errs = append(errs, field.Required(oidcPath.Child("issuerURL"), "issuerURL cannot be empty"))
	}
	return errs
}

// validateStructuredAuthentication: the feature gate may not be off, the
// deprecated oidcConfig not be set, and the ConfigMap must be named.
func validateStructuredAuthentication(api *gardencore.KubeAPIServerConfig, path *field.Path) field.ErrorList {
	sa := api.StructuredAuthentication
	if sa == nil {
		return nil
	}
	var errs field.ErrorList
	saPath := path.Child("structuredAuthentication")
	if value, ok := api.FeatureGates["StructuredAuthenticationConfiguration"]; ok && !value {
		errs = append(errs, field.Forbidden(saPath, "requires feature gate StructuredAuthenticationConfiguration to be enabled"))
	}
	if api.OIDCConfig != nil { //nolint:staticcheck // SA1019: Gardener refuses the deprecated oidcConfig next to structuredAuthentication.
		errs = append(errs, field.Forbidden(path.Child("oidcConfig"), "is incompatible with structuredAuthentication"))
	}
	if sa.ConfigMapName == "" {
		errs = append(errs, field.Forbidden(saPath.Child("configMapName"), "must provide a name"))
	}
	return errs
}

// Gardener's bounds of serviceAccountConfig.maxTokenExpiration: it refuses
// values outside them rather than clamping.
const (
	minTokenExpiration = 720 * time.Hour
	maxTokenExpiration = 2160 * time.Hour
)

// validateServiceAccountConfig: maxTokenExpiration may not be negative and
// must lie within [720h, 2160h].
func validateServiceAccountConfig(sa *gardencore.ServiceAccountConfig, path *field.Path) field.ErrorList {
	if sa == nil || sa.MaxTokenExpiration == nil {
		return nil
	}
	var errs field.ErrorList
	d, p := sa.MaxTokenExpiration.Duration, path.Child("maxTokenExpiration")
	if d < 0 {
		errs = append(errs, field.Invalid(p, *sa.MaxTokenExpiration, "can not be negative"))
	}
	if d > 0 && d < minTokenExpiration {
		errs = append(errs, field.Forbidden(p, "must be at least 720h (30d)"))
	}
	if d > maxTokenExpiration {
		errs = append(errs, field.Forbidden(p, "must be at most 2160h (90d)"))
	}
	return errs
}

// validateObjectReferenceName mirrors ValidateObjectReferenceNameAndNamespace
// without a required namespace.
func validateObjectReferenceName(name, namespace string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must provide a name"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(path.Child("name"), name, msg))
		}
	}
	if namespace != "" {
		for _, msg := range apivalidation.ValidateNamespaceName(namespace, false) {
			errs = append(errs, field.Invalid(path.Child("namespace"), namespace, msg))
		}
	}
	return errs
}

// validateExtensions mirrors validateExtensions: each type is a DNS label,
// named once.
func validateExtensions(extensions []gardencore.Extension, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	types := sets.New[string]()
	for i, e := range extensions {
		tp := path.Index(i).Child("type")
		if e.Type == "" {
			errs = append(errs, field.Required(tp, "field must not be empty"))
		} else {
			for _, msg := range validation.IsDNS1123Label(e.Type) {
				errs = append(errs, field.Invalid(tp, e.Type, msg))
			}
		}
		if types.Has(e.Type) {
			errs = append(errs, field.Duplicate(tp, e.Type))
		}
		types.Insert(e.Type)
	}
	return errs
}

// resourceGVKs are the kinds spec.resources may reference.
var resourceGVKs = []string{
	corev1.SchemeGroupVersion.WithKind("Secret").String(),
	corev1.SchemeGroupVersion.WithKind("ConfigMap").String(),
	securityv1alpha1.SchemeGroupVersion.WithKind("WorkloadIdentity").String(),
}

// validateResources mirrors ValidateResources: unique names and references
// to a Secret, ConfigMap or WorkloadIdentity.
func validateResources(resources []gardencore.NamedResourceReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, r := range resources {
		rp := path.Index(i)
		switch {
		case r.Name == "":
			errs = append(errs, field.Required(rp.Child("name"), "field must not be empty"))
		case names.Has(r.Name):
			errs = append(errs, field.Duplicate(rp.Child("name"), r.Name))
		default:
			names.Insert(r.Name)
		}
		errs = append(errs, validateResourceRef(r.ResourceRef, rp.Child("resourceRef"))...)
	}
	return errs
}

// validateResourceRef mirrors validateCrossVersionObjectReference.
func validateResourceRef(ref autoscalingv1.CrossVersionObjectReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), "must provide an apiVersion"))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "must provide a kind"))
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
		errs = append(errs, field.Invalid(path, ref, fmt.Sprintf("cannot determine GroupVersionKind for specified reference: %v", err)))
	} else if gvk := gv.WithKind(ref.Kind).String(); !slices.Contains(resourceGVKs, gvk) {
		errs = append(errs, field.NotSupported(path, gvk, resourceGVKs))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must provide a name"))
	}
	return errs
}

// validateMaintenance mirrors the time window checks of
// validateMaintenance: both ends in the format HHMMSS+ZZZZ, the window
// between 30 minutes and 6 hours long.
func validateMaintenance(m *gardencore.Maintenance, path *field.Path) field.ErrorList {
	if m == nil || m.TimeWindow == nil {
		return nil
	}
	window, err := timewindow.ParseMaintenanceTimeWindow(m.TimeWindow.Begin, m.TimeWindow.End)
	if err != nil {
		return field.ErrorList{field.Invalid(path.Child("timeWindow", "begin/end"), m.TimeWindow, err.Error())}
	}
	switch d := window.Duration(); {
	case d > gardencore.MaintenanceTimeWindowDurationMaximum:
		return field.ErrorList{field.Invalid(path.Child("timeWindow"), d, fmt.Sprintf("time window must not be greater than %s", gardencore.MaintenanceTimeWindowDurationMaximum))}
	case d < gardencore.MaintenanceTimeWindowDurationMinimum:
		return field.ErrorList{field.Invalid(path.Child("timeWindow"), d, fmt.Sprintf("time window must not be smaller than %s", gardencore.MaintenanceTimeWindowDurationMinimum))}
	}
	return nil
}

// validateTolerations mirrors ValidateTolerations: keys are label names,
// values label values, and no key is tolerated twice.
func validateTolerations(tolerations []gardencore.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range tolerations {
		tp := path.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(tp.Child("key"), "cannot be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, tp.Child("key"))...)
		}
		if t.Value != nil {
			for _, msg := range validation.IsValidLabelValue(*t.Value) {
				errs = append(errs, field.Invalid(tp.Child("value"), *t.Value, msg))
			}
		}
		id := t.Key
		if t.Value != nil {
			id += "=" + *t.Value
		}
		if seen.Has(id) || seen.Has(t.Key) {
			errs = append(errs, field.Duplicate(tp, id))
		}
		seen.Insert(id)
	}
	return errs
}

// validateSpecUpdate mirrors the checks of ValidateShootSpecUpdate.
func validateSpecUpdate(spec, old *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(spec.Region, old.Region, path.Child("region"))...)
	errs = append(errs, validateCloudProfileReference(spec.CloudProfile, spec.CloudProfileName, spec.Kubernetes.Version, path)...) //nolint:staticcheck // SA1019: Gardener still validates the deprecated name (forbidden from Kubernetes 1.34).
	errs = append(errs, validateBindingUpdate(spec, old, path)...)
	errs = append(errs, validateDNSUpdate(spec.DNS, old.DNS, spec.SeedName != nil, path.Child("dns"))...)
	errs = append(errs, validateKubernetesVersionUpdate(spec.Kubernetes.Version, old.Kubernetes.Version, false, path.Child("kubernetes", "version"))...)
	workers := path.Child("provider", "workers")
	switch {
	case len(old.Provider.Workers) > 0 && len(spec.Provider.Workers) == 0:
		return append(errs, field.Forbidden(workers, "cannot switch from a Shoot with workers to a workerless Shoot"))
	case len(old.Provider.Workers) == 0 && len(spec.Provider.Workers) > 0:
		return append(errs, field.Forbidden(workers, "cannot switch from a workerless Shoot to a Shoot with workers"))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(spec.Provider.Type, old.Provider.Type, path.Child("provider", "type"))...)
	errs = append(errs, validateWorkersUpdate(spec, old, workers)...)
	return append(errs, validateNetworkingUpdate(spec.Networking, old.Networking, path.Child("networking"))...)
}

// validateBindingUpdate: a set credentialsBindingName cannot be unset, and
// secretBindingName is immutable unless the shoot moves from it to a
// credentialsBindingName.
func validateBindingUpdate(spec, old *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old.CredentialsBindingName != nil && ptr.Deref(spec.CredentialsBindingName, "") == "" {
		errs = append(errs, field.Forbidden(path.Child("credentialsBindingName"), "the field cannot be unset"))
	}
	secretBinding, oldSecretBinding := spec.SecretBindingName, old.SecretBindingName //nolint:staticcheck // SA1019: Gardener still guards the deprecated binding and the move off it.
	migrating := oldSecretBinding != nil && secretBinding == nil && ptr.Deref(spec.CredentialsBindingName, "") != ""
	if !migrating {
		errs = append(errs, apivalidation.ValidateImmutableField(secretBinding, oldSecretBinding, path.Child("secretBindingName"))...)
	}
	return errs
}

// validateWorkersUpdate: each pool's Kubernetes version (its own or the
// shoot's) may not go down, nor skip a minor version when the pool is
// updated in place; such a pool may not downgrade its image either.
func validateWorkersUpdate(spec, old *gardencore.ShootSpec, workers *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, w := range spec.Provider.Workers {
		ow := w
		if j := slices.IndexFunc(old.Provider.Workers, func(o gardencore.Worker) bool { return o.Name == w.Name }); j >= 0 {
			ow = old.Provider.Workers[j]
		}
		oldVersion, newVersion := old.Kubernetes.Version, spec.Kubernetes.Version
		if ow.Kubernetes != nil && ow.Kubernetes.Version != nil {
			oldVersion = *ow.Kubernetes.Version
		}
		if w.Kubernetes != nil && w.Kubernetes.Version != nil {
			newVersion = *w.Kubernetes.Version
		}
		inPlace := isInPlace(w.UpdateStrategy)
		wp := workers.Index(i)
		errs = append(errs, validateKubernetesVersionUpdate(newVersion, oldVersion, !inPlace, wp.Child("kubernetes", "version"))...)
		if inPlace {
			errs = append(errs, validateMachineImageVersionInPlaceUpdate(w.Machine.Image, ow.Machine.Image, wp.Child("machine", "image", "version"))...)
		}
	}
	return errs
}

// validateKubernetesVersionUpdate mirrors ValidateKubernetesVersionUpdate.
func validateKubernetesVersionUpdate(version, old string, skipMinorAllowed bool, path *field.Path) field.ErrorList {
	if version == "" {
		return field.ErrorList{field.Invalid(path, version, "cannot validate kubernetes version upgrade because it is unset")}
	}
	var errs field.ErrorList
	downgrade, err := versionLess(version, old)
	if err != nil {
		errs = append(errs, field.Invalid(path, version, err.Error()))
	}
	if downgrade {
		errs = append(errs, field.Forbidden(path, "kubernetes version downgrade is not supported"))
	}
	if !skipMinorAllowed {
		o, oerr := parseSemver(old)
		if oerr != nil {
			return append(errs, field.Invalid(path, old, oerr.Error()))
		}
		if v, verr := parseSemver(version); verr == nil && !v.less(semver{major: o.major, minor: o.minor + 2}) {
			errs = append(errs, field.Forbidden(path, "kubernetes version upgrade cannot skip a minor version"))
		}
	}
	return errs
}

// validateMachineImageVersionInPlaceUpdate mirrors the function of the
// same name: pools updated in place may not downgrade their image.
func validateMachineImageVersionInPlaceUpdate(image, old *gardencore.ShootMachineImage, path *field.Path) field.ErrorList {
	var version, oldVersion string
	if image != nil {
		version = image.Version
	}
	if old != nil {
		oldVersion = old.Version
	}
	if version == "" {
		return field.ErrorList{field.Invalid(path, image, "cannot validate machine image version upgrade because it is unset")}
	}
	var errs field.ErrorList
	downgrade, err := versionLess(version, oldVersion)
	if err != nil {
		errs = append(errs, field.Invalid(path, version, err.Error()))
	}
	if downgrade {
		errs = append(errs, field.Forbidden(path, "machine image version downgrade is not supported when the update strategy is AutoInPlaceUpdate or ManualInPlaceUpdate"))
	}
	return errs
}

// validateNetworkingUpdate mirrors validateNetworkingUpdate.
func validateNetworkingUpdate(n, old *gardencore.Networking, path *field.Path) field.ErrorList {
	if old == nil {
		return nil
	}
	if n == nil {
		return field.ErrorList{field.Forbidden(path, "networking cannot be set to nil if it's already set")}
	}
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(n.Type, old.Type, path.Child("type"))...)
	if old.Pods != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(n.Pods, old.Pods, path.Child("pods"))...)
	}
	if old.Services != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(n.Services, old.Services, path.Child("services"))...)
	}
	return errs
}

func isInPlace(s *gardencore.MachineUpdateStrategy) bool {
	return s != nil && (*s == gardencore.AutoInPlaceUpdate || *s == gardencore.ManualInPlaceUpdate)
}
