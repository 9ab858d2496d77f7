package admission

import (
	"reflect"
	"slices"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
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
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateSpec mirrors the checks of ValidateShootSpec, in its order.
func validateSpec(spec *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateCloudProfileReference(spec.CloudProfile, spec.CloudProfileName, spec.Kubernetes.Version, path)...) //nolint:staticcheck // SA1019: Gardener still validates the deprecated name (forbidden from Kubernetes 1.34).
	errs = append(errs, validateProvider(spec, path.Child("provider"))...)
	errs = append(errs, validateKubernetes(spec.Kubernetes, path.Child("kubernetes"))...)
	if spec.Region == "" {
		errs = append(errs, field.Required(path.Child("region"), "must specify a region"))
	}
	if len(spec.Provider.Workers) > 0 {
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
		wp := path.Child("workers").Index(i)
		if w.Machine.Type == "" {
			errs = append(errs, field.Required(wp.Child("machine", "type"), "must specify a machine type"))
		}
		if w.Machine.Image == nil {
			errs = append(errs, field.Required(wp.Child("machine", "image"), "must specify a machine image"))
		} else {
			if w.Machine.Image.Name == "" {
				errs = append(errs, field.Required(wp.Child("machine", "image", "name"), "must specify a machine image name"))
			}
			if w.Machine.Image.Version == "" {
				errs = append(errs, field.Required(wp.Child("machine", "image", "version"), "must specify a machine image version"))
			}
		}
		if w.Minimum < 0 {
			errs = append(errs, field.Invalid(wp.Child("minimum"), w.Minimum, "minimum value must not be negative"))
		}
		if w.Maximum < 0 {
			errs = append(errs, field.Invalid(wp.Child("maximum"), w.Maximum, "maximum value must not be negative"))
		}
		if w.Maximum < w.Minimum {
			errs = append(errs, field.Forbidden(wp.Child("maximum"), "maximum value must not be less than minimum value"))
		}
	}
	return errs
}

// validateKubernetes mirrors validateKubernetes and the authentication part
// of ValidateKubeAPIServer.
func validateKubernetes(k gardencore.Kubernetes, path *field.Path) field.ErrorList {
	if k.Version == "" {
		return field.ErrorList{field.Required(path.Child("version"), "kubernetes version must not be empty")}
	}
	api := k.KubeAPIServer
	if api == nil {
		return nil
	}
	var errs field.ErrorList
	apiPath := path.Child("kubeAPIServer")
	if oidc := api.OIDCConfig; oidc != nil && atLeast(k.Version, 1, 32) { //nolint:staticcheck // SA1019: Gardener refuses the deprecated oidcConfig from Kubernetes 1.32 and validates it below.
		errs = append(errs, field.Invalid(apiPath.Child("oidcConfig"), *oidc, "for Kubernetes versions >= 1.32, oidcConfig field is no longer supported"))
	} else if oidc != nil {
		oidcPath := apiPath.Child("oidcConfig")
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
	}
	if sa := api.StructuredAuthentication; sa != nil {
		saPath := apiPath.Child("structuredAuthentication")
		if value, ok := api.FeatureGates["StructuredAuthenticationConfiguration"]; ok && !value {
			errs = append(errs, field.Forbidden(saPath, "requires feature gate StructuredAuthenticationConfiguration to be enabled"))
		}
		if api.OIDCConfig != nil { //nolint:staticcheck // SA1019: Gardener refuses the deprecated oidcConfig next to structuredAuthentication.
			errs = append(errs, field.Forbidden(apiPath.Child("oidcConfig"), "is incompatible with structuredAuthentication"))
		}
		if sa.ConfigMapName == "" {
			errs = append(errs, field.Forbidden(saPath.Child("configMapName"), "must provide a name"))
		}
	}
	return errs
}

// validateSpecUpdate mirrors the checks of ValidateShootSpecUpdate.
func validateSpecUpdate(spec, old *gardencore.ShootSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(spec.Region, old.Region, path.Child("region"))...)
	errs = append(errs, validateCloudProfileReference(spec.CloudProfile, spec.CloudProfileName, spec.Kubernetes.Version, path)...) //nolint:staticcheck // SA1019: Gardener still validates the deprecated name (forbidden from Kubernetes 1.34).
	errs = append(errs, validateBindingUpdate(spec, old, path)...)
	errs = append(errs, validateDNSUpdate(spec.DNS, old.DNS, path.Child("dns"))...)
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

// validateDNSUpdate mirrors validateDNSUpdate: spec.dns and a set domain may
// not be removed or changed.
func validateDNSUpdate(dns, old *gardencore.DNS, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old != nil && dns == nil {
		errs = append(errs, apivalidation.ValidateImmutableField(dns, old, path)...)
	}
	if dns != nil && old != nil && old.Domain != nil && !reflect.DeepEqual(dns.Domain, old.Domain) {
		errs = append(errs, apivalidation.ValidateImmutableField(dns.Domain, old.Domain, path.Child("domain"))...)
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
