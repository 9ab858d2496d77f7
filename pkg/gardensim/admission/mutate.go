package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// ProjectName is the Gardener project of a project namespace garden-<project>.
func ProjectName(namespace string) string { return strings.TrimPrefix(namespace, "garden-") }

// DefaultDomainFor is the domain Gardener's ShootDNS plugin gives a shoot of
// a project when the garden has the default domain domain.
func DefaultDomainFor(shoot *gardencorev1beta1.Shoot, domain string) string {
	return fmt.Sprintf("%s.%s.%s", shoot.Name, ProjectName(shoot.Namespace), domain)
}

// cloudProfileName is the CloudProfile a shoot references, as Gardener's
// BuildCoreCloudProfileReference resolves it; kind is CloudProfile unless
// the reference says otherwise.
func cloudProfileName(shoot *gardencorev1beta1.Shoot) (name, kind string, ok bool) {
	if ref := shoot.Spec.CloudProfile; ref != nil {
		kind = ref.Kind
		if kind == "" {
			kind = v1beta1constants.CloudProfileReferenceKindCloudProfile
		}
		return ref.Name, kind, true
	}
	if n := ptr.Deref(shoot.Spec.CloudProfileName, ""); n != "" { //nolint:staticcheck // SA1019: Gardener still resolves a shoot's profile by the deprecated name.
		return n, v1beta1constants.CloudProfileReferenceKindCloudProfile, true
	}
	return "", "", false
}

// lookupProfile reads the referenced CloudProfile as Gardener's plugins do:
// a missing one is a NotFound of resource "cloudprofile", as the lister
// words it.
func lookupProfile(ctx context.Context, env Env, name, kind string) (*gardencorev1beta1.CloudProfile, error) {
	if kind != v1beta1constants.CloudProfileReferenceKindCloudProfile {
		return nil, fmt.Errorf("could not find referenced cloud profile with kind %q", kind)
	}
	p, err := env.CloudProfile(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(gardencorev1beta1.Resource("cloudprofile"), name)
	}
	if err != nil {
		return nil, fmt.Errorf("read cloud profile %s: %w", name, err)
	}
	return p, nil
}

// mutateShoot is the ShootMutator plugin's Admit: it defaults the
// Kubernetes version of the shoot and of its worker pools and the machine
// images from the CloudProfile, and records the creator. It returns the
// profile, nil if the shoot references none.
func mutateShoot(ctx context.Context, env Env, shoot, old *gardencorev1beta1.Shoot, req Request) (*gardencorev1beta1.CloudProfile, error) {
	if req.Operation == Create && namesCloudProfileTwice(shoot) {
		return nil, unknownError(errors.New("new shoot can only specify either cloudProfileName or cloudProfile reference"))
	}
	name, kind, ok := cloudProfileName(shoot)
	if !ok {
		return nil, nil
	}
	profile, err := lookupProfile(ctx, env, name, kind)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("could not find referenced cloud profile: %w", err))
	}
	if req.Operation == Create && req.User != "" {
		metav1.SetMetaDataAnnotation(&shoot.ObjectMeta, v1beta1constants.GardenCreatedBy, req.User)
	}
	now := env.Now()
	errs := defaultKubernetesVersions(shoot, profile.Spec.Kubernetes.Versions, now)
	if len(errs) == 0 && shoot.DeletionTimestamp == nil {
		errs = defaultMachineImages(profile, shoot, old, now)
	}
	if len(errs) > 0 {
		return nil, forbiddenList(shoot.Name, errs)
	}
	return profile, nil
}

// namesCloudProfileTwice reports whether the shoot names its profile both
// ways, which a new shoot may not.
func namesCloudProfileTwice(shoot *gardencorev1beta1.Shoot) bool {
	return ptr.Deref(shoot.Spec.CloudProfileName, "") != "" && shoot.Spec.CloudProfile != nil //nolint:staticcheck // SA1019: Gardener refuses a new shoot that names its profile by the deprecated field too.
}

// defaultKubernetesVersions completes the partial Kubernetes versions of
// the shoot and of its pools; it stops at the first pool whose version has
// no match.
func defaultKubernetesVersions(shoot *gardencorev1beta1.Shoot, versions []gardencorev1beta1.ExpirableVersion, now time.Time) field.ErrorList {
	var errs field.ErrorList
	if v, verrs := defaultKubernetesVersion(versions, shoot.Spec.Kubernetes.Version, field.NewPath("spec", "kubernetes", "version"), now); len(verrs) > 0 {
		errs = append(errs, verrs...)
	} else if v != "" {
		shoot.Spec.Kubernetes.Version = v
	}
	workers := field.NewPath("spec", "provider", "workers")
	for i := range shoot.Spec.Provider.Workers {
		w := &shoot.Spec.Provider.Workers[i]
		if w.Kubernetes == nil || w.Kubernetes.Version == nil {
			continue
		}
		v, verrs := defaultKubernetesVersion(versions, *w.Kubernetes.Version, workers.Index(i).Child("kubernetes", "version"), now)
		if len(verrs) > 0 {
			return append(errs, verrs...)
		}
		if v != "" {
			w.Kubernetes.Version = ptr.To(v)
		}
	}
	return errs
}

// defaultMachineImages sets the machine image of each pool (see
// ensureMachineImage).
func defaultMachineImages(profile *gardencorev1beta1.CloudProfile, shoot, old *gardencorev1beta1.Shoot, now time.Time) field.ErrorList {
	var oldWorkers []gardencorev1beta1.Worker
	if old != nil {
		oldWorkers = old.Spec.Provider.Workers
	}
	workers := field.NewPath("spec", "provider", "workers")
	var errs field.ErrorList
	for i := range shoot.Spec.Provider.Workers {
		image, ferr := ensureMachineImage(profile, oldWorkers, &shoot.Spec.Provider.Workers[i], workers.Index(i), now)
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		shoot.Spec.Provider.Workers[i].Machine.Image = image
	}
	return errs
}

// defaultKubernetesVersion completes a version of the form "1" or "1.33"
// to the latest supported version it matches; a full version is left alone
// (empty result).
func defaultKubernetesVersion(versions []gardencorev1beta1.ExpirableVersion, version string, path *field.Path, now time.Time) (string, field.ErrorList) {
	parts := strings.Split(version, ".")
	if len(parts) == 3 {
		return "", nil
	}
	major, minor, bad, err := versionParts(parts)
	if err != nil {
		return "", field.ErrorList{field.Invalid(path, bad, "must be a semantic version")}
	}
	var latest *semver
	for _, c := range versions {
		if classification(c, now) != gardencorev1beta1.ClassificationSupported {
			continue
		}
		if v, err := parseSemver(c.Version); err == nil && v.matches(major, minor) && (latest == nil || latest.less(v)) {
			latest = &v
		}
	}
	if latest != nil {
		return latest.String(), nil
	}
	return "", field.ErrorList{field.Invalid(path, version, fmt.Sprintf("couldn't find a suitable version for %s. Suitable versions have a non-expired expiration date and are no 'preview' versions. 'Preview'-classified versions have to be selected explicitly", version))}
}

// versionParts reads the major and minor of a partial version split at its
// dots ("1" or "1.33" split); a part left out is nil. On error it also
// returns the part that is no number.
func versionParts(parts []string) (major, minor *uint64, bad string, err error) {
	if len(parts) == 2 && parts[1] != "" {
		if minor, err = parseVersionPart(parts[1]); err != nil {
			return nil, nil, parts[1], err
		}
	}
	if parts[0] != "" {
		if major, err = parseVersionPart(parts[0]); err != nil {
			return nil, nil, parts[0], err
		}
	}
	return major, minor, "", nil
}

// ensureMachineImage keeps an existing pool's image when the update leaves
// its name or version out, and defaults a missing image or version from the
// profile otherwise, as ShootMutator does.
func ensureMachineImage(profile *gardencorev1beta1.CloudProfile, oldWorkers []gardencorev1beta1.Worker, w *gardencorev1beta1.Worker, path *field.Path, now time.Time) (*gardencorev1beta1.ShootMachineImage, *field.Error) {
	image := w.Machine.Image
	if i := slices.IndexFunc(oldWorkers, func(o gardencorev1beta1.Worker) bool { return o.Name == w.Name }); i >= 0 && oldWorkers[i].Machine.Image != nil {
		old := oldWorkers[i].Machine.Image
		if image == nil {
			return old.DeepCopy(), nil
		}
		if old.Name == image.Name && (ptr.Deref(image.Version, "") == "" || ptr.Deref(image.Version, "") == ptr.Deref(old.Version, "")) {
			return old.DeepCopy(), nil
		}
	}
	return defaultMachineImage(profile.Spec.MachineImages, image, ptr.Deref(w.Machine.Architecture, v1beta1constants.ArchitectureAMD64), path, now)
}

// defaultMachineImage picks the image (the named one, or the first one that
// supports arch) and its latest active non-preview version matching a
// partial version.
func defaultMachineImage(images []gardencorev1beta1.MachineImage, image *gardencorev1beta1.ShootMachineImage, arch string, path *field.Path, now time.Time) (*gardencorev1beta1.ShootMachineImage, *field.Error) {
	var reference string
	if image != nil {
		reference = fmt.Sprintf("%s@%s", image.Name, ptr.Deref(image.Version, ""))
	}
	if len(images) == 0 {
		return nil, field.Invalid(path, reference, "the cloud profile does not contain any machine image - cannot create shoot cluster")
	}
	chosen, offered, ferr := chooseMachineImage(images, image, arch, path, reference)
	if ferr != nil {
		return nil, ferr
	}
	if offered {
		return image, nil
	}
	major, minor, full, ferr := partialImageVersion(image, path)
	if ferr != nil {
		return nil, ferr
	}
	if full {
		return image, nil
	}
	latest := latestImageVersion(chosen.Versions, arch, major, minor, now)
	if latest == nil {
		return nil, field.Invalid(path, reference, "failed to determine latest machine image from cloud profile: the latest machine version has been removed")
	}
	out := &gardencorev1beta1.ShootMachineImage{Name: chosen.Name, Version: ptr.To(latest.String())}
	if image != nil {
		out.ProviderConfig = image.ProviderConfig
	}
	return out, nil
}

// chooseMachineImage is the profile's image of the shoot's image name, and
// whether it offers the shoot's exact version; for a shoot without an
// image name, the first image with a version that supports arch.
func chooseMachineImage(images []gardencorev1beta1.MachineImage, image *gardencorev1beta1.ShootMachineImage, arch string, path *field.Path, reference string) (*gardencorev1beta1.MachineImage, bool, *field.Error) {
	if image == nil || image.Name == "" {
		for i := range images {
			if slices.ContainsFunc(images[i].Versions, func(v gardencorev1beta1.MachineImageVersion) bool { return supportsArch(v, arch) }) {
				return &images[i], false, nil
			}
		}
		return nil, false, field.Invalid(path, reference, fmt.Sprintf("no valid machine image found that supports architecture `%s`", arch))
	}
	i := slices.IndexFunc(images, func(m gardencorev1beta1.MachineImage) bool { return m.Name == image.Name })
	if i < 0 {
		return nil, false, field.Invalid(path, image.Name, "image is not supported")
	}
	offered := slices.ContainsFunc(images[i].Versions, func(v gardencorev1beta1.MachineImageVersion) bool { return v.Version == ptr.Deref(image.Version, "") })
	return &images[i], offered, nil
}

// partialImageVersion reads the major and minor of the shoot's image
// version ("1592" or "1592.4", nil if left out); full reports a version
// with all three parts, which is not defaulted.
func partialImageVersion(image *gardencorev1beta1.ShootMachineImage, path *field.Path) (major, minor *uint64, full bool, ferr *field.Error) {
	if image == nil {
		return nil, nil, false, nil
	}
	version := ptr.Deref(image.Version, "")
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) == 3 {
		return nil, nil, true, nil
	}
	major, minor, _, err := versionParts(parts)
	if err != nil {
		return nil, nil, false, field.Invalid(path, version, err.Error())
	}
	return major, minor, false, nil
}

// latestImageVersion is the latest version for arch that matches major and
// minor (if given) and is active and not in preview; nil if none.
func latestImageVersion(versions []gardencorev1beta1.MachineImageVersion, arch string, major, minor *uint64, now time.Time) *semver {
	var latest *semver
	for _, v := range versions {
		sv, err := parseSemver(v.Version)
		if err != nil || !supportsArch(v, arch) || !sv.matches(major, minor) {
			continue
		}
		if c := classification(v.ExpirableVersion, now); c == gardencorev1beta1.ClassificationPreview || !c.IsActive() {
			continue
		}
		if latest == nil || latest.less(sv) {
			latest = &sv
		}
	}
	return latest
}

func parseVersionPart(part string) (*uint64, error) {
	v, err := strconv.ParseUint(part, 10, 0)
	if err != nil {
		return nil, fmt.Errorf("%s must be a semantic version: %w", part, err)
	}
	return &v, nil
}

func supportsArch(v gardencorev1beta1.MachineImageVersion, arch string) bool {
	if len(v.Architectures) == 0 {
		return arch == v1beta1constants.ArchitectureAMD64
	}
	return slices.Contains(v.Architectures, arch)
}

// prepare is the registry strategy's PrepareForCreate and PrepareForUpdate:
// only the binding subresource sets spec.seedName, and the two ways of
// naming the cloud profile and a DNS provider's credentials are kept in
// sync.
func prepare(shoot, old *gardencorev1beta1.Shoot) {
	if old != nil {
		shoot.Spec.SeedName = old.Spec.SeedName
	}
	syncDNSProviderCredentials(shoot)
	syncCloudProfileFields(old, shoot)
}

// syncCloudProfileFields mirrors Gardener's SyncCloudProfileFields: from
// Kubernetes 1.34 on, the two ways of naming the profile are no longer
// synced; below, spec.cloudProfileName follows spec.cloudProfile.
func syncCloudProfileFields(old, shoot *gardencorev1beta1.Shoot) {
	if shoot.DeletionTimestamp != nil {
		return
	}
	v, err := parseSemver(shoot.Spec.Kubernetes.Version)
	known := err == nil
	if known && !v.less(semver{major: 1, minor: 34}) {
		defaultCloudProfileKind(&shoot.Spec)
		if old != nil {
			dropUnchangedCloudProfileName(&shoot.Spec, &old.Spec)
		}
		return
	}
	syncCloudProfileName(&shoot.Spec, !known || v.less(semver{major: 1, minor: 33}))
}

// defaultCloudProfileKind defaults an empty kind of the reference to
// CloudProfile.
func defaultCloudProfileKind(spec *gardencorev1beta1.ShootSpec) {
	if spec.CloudProfile != nil && spec.CloudProfile.Kind == "" {
		spec.CloudProfile.Kind = v1beta1constants.CloudProfileReferenceKindCloudProfile
	}
}

// dropUnchangedCloudProfileName: from Kubernetes 1.34 on, an update's
// unchanged spec.cloudProfileName that names the referenced CloudProfile is
// unset.
func dropUnchangedCloudProfileName(spec, old *gardencorev1beta1.ShootSpec) {
	name := spec.CloudProfileName //nolint:staticcheck // SA1019: Gardener unsets the deprecated name here.
	if name == nil || spec.CloudProfile == nil || spec.CloudProfile.Kind != v1beta1constants.CloudProfileReferenceKindCloudProfile {
		return
	}
	if *name == ptr.Deref(old.CloudProfileName, "") && *name == spec.CloudProfile.Name { //nolint:staticcheck // SA1019: only an unchanged deprecated name is unset.
		spec.CloudProfileName = nil //nolint:staticcheck // SA1019: Gardener unsets the deprecated name here.
	}
}

// syncCloudProfileName: below Kubernetes 1.34, spec.cloudProfile is filled
// from spec.cloudProfileName, and spec.cloudProfileName follows a reference
// of kind CloudProfile (always below 1.33, else if it names another
// profile) and is unset for other kinds.
func syncCloudProfileName(spec *gardencorev1beta1.ShootSpec, below133 bool) {
	name := spec.CloudProfileName //nolint:staticcheck // SA1019: Gardener syncs the deprecated name below Kubernetes 1.34.
	if spec.CloudProfile == nil && name != nil {
		spec.CloudProfile = &gardencorev1beta1.CloudProfileReference{Kind: v1beta1constants.CloudProfileReferenceKindCloudProfile, Name: *name}
	}
	defaultCloudProfileKind(spec)
	if spec.CloudProfile == nil {
		return
	}
	if spec.CloudProfile.Kind != v1beta1constants.CloudProfileReferenceKindCloudProfile {
		spec.CloudProfileName = nil //nolint:staticcheck // SA1019: Gardener unsets the deprecated name for other kinds.
		return
	}
	if below133 || ptr.Deref(name, "") != "" && *name != spec.CloudProfile.Name {
		spec.CloudProfileName = ptr.To(spec.CloudProfile.Name) //nolint:staticcheck // SA1019: Gardener syncs the deprecated name below Kubernetes 1.34.
	}
}

// unknownError is how the API server answers an admission error that is no
// API status: 500 with reason Unknown and the error's text.
func unknownError(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}
