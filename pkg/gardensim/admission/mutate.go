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

// mutateDNS is the ShootDNS plugin's Admit: a shoot bound to a seed whose
// DNS is managed gets the default domain if it has none. An update that
// drops spec.dns.domain of a scheduled shoot thus gets the same domain again.
func mutateDNS(shoot, _ *gardencorev1beta1.Shoot, defaultDomain string) {
	if shoot.Spec.SeedName == nil || usesUnmanagedDNS(shoot) {
		return
	}
	if shoot.Spec.DNS == nil {
		shoot.Spec.DNS = &gardencorev1beta1.DNS{}
	}
	if defaultDomain != "" && shoot.Spec.DNS.Domain == nil {
		shoot.Spec.DNS.Domain = ptr.To(DefaultDomainFor(shoot, defaultDomain))
	}
}

// usesUnmanagedDNS reports whether the shoot's primary DNS provider is of
// type unmanaged.
func usesUnmanagedDNS(shoot *gardencorev1beta1.Shoot) bool {
	if shoot.Spec.DNS == nil {
		return false
	}
	for _, p := range shoot.Spec.DNS.Providers {
		if ptr.Deref(p.Primary, false) && ptr.Deref(p.Type, "") == "unmanaged" {
			return true
		}
	}
	return false
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
	if n := ptr.Deref(shoot.Spec.CloudProfileName, ""); n != "" {
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
	if req.Operation == Create && ptr.Deref(shoot.Spec.CloudProfileName, "") != "" && shoot.Spec.CloudProfile != nil {
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
	var errs field.ErrorList
	now := env.Now()
	versions := profile.Spec.Kubernetes.Versions
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
			errs = append(errs, verrs...)
			break
		}
		if v != "" {
			w.Kubernetes.Version = ptr.To(v)
		}
	}
	if len(errs) == 0 && shoot.DeletionTimestamp == nil {
		var oldWorkers []gardencorev1beta1.Worker
		if old != nil {
			oldWorkers = old.Spec.Provider.Workers
		}
		for i := range shoot.Spec.Provider.Workers {
			image, ferr := ensureMachineImage(profile, oldWorkers, &shoot.Spec.Provider.Workers[i], workers.Index(i), now)
			if ferr != nil {
				errs = append(errs, ferr)
				continue
			}
			shoot.Spec.Provider.Workers[i].Machine.Image = image
		}
	}
	if len(errs) > 0 {
		return nil, forbiddenList(shoot.Name, errs)
	}
	return profile, nil
}

// defaultKubernetesVersion completes a version of the form "1" or "1.33"
// to the latest supported version it matches; a full version is left alone
// (empty result).
func defaultKubernetesVersion(versions []gardencorev1beta1.ExpirableVersion, version string, path *field.Path, now time.Time) (string, field.ErrorList) {
	parts := strings.Split(version, ".")
	if len(parts) == 3 {
		return "", nil
	}
	var major, minor *uint64
	if len(parts) == 2 && parts[1] != "" {
		v, err := strconv.ParseUint(parts[1], 10, 0)
		if err != nil {
			return "", field.ErrorList{field.Invalid(path, parts[1], "must be a semantic version")}
		}
		minor = &v
	}
	if parts[0] != "" {
		v, err := strconv.ParseUint(parts[0], 10, 0)
		if err != nil {
			return "", field.ErrorList{field.Invalid(path, parts[0], "must be a semantic version")}
		}
		major = &v
	}
	var latest *semver
	for _, c := range versions {
		if classification(c, now) != gardencorev1beta1.ClassificationSupported {
			continue
		}
		v, err := parseSemver(c.Version)
		if err != nil || (major != nil && v.major != *major) || (minor != nil && v.minor != *minor) {
			continue
		}
		if latest == nil || latest.less(v) {
			latest = &v
		}
	}
	if latest != nil {
		return latest.String(), nil
	}
	return "", field.ErrorList{field.Invalid(path, version, fmt.Sprintf("couldn't find a suitable version for %s. Suitable versions have a non-expired expiration date and are no 'preview' versions. 'Preview'-classified versions have to be selected explicitly", version))}
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
	var chosen *gardencorev1beta1.MachineImage
	if image != nil && image.Name != "" {
		i := slices.IndexFunc(images, func(m gardencorev1beta1.MachineImage) bool { return m.Name == image.Name })
		if i < 0 {
			return nil, field.Invalid(path, image.Name, "image is not supported")
		}
		chosen = &images[i]
		if slices.ContainsFunc(chosen.Versions, func(v gardencorev1beta1.MachineImageVersion) bool { return v.Version == ptr.Deref(image.Version, "") }) {
			return image, nil
		}
	} else {
		for i := range images {
			if slices.ContainsFunc(images[i].Versions, func(v gardencorev1beta1.MachineImageVersion) bool { return supportsArch(v, arch) }) {
				chosen = &images[i]
				break
			}
		}
		if chosen == nil {
			return nil, field.Invalid(path, reference, fmt.Sprintf("no valid machine image found that supports architecture `%s`", arch))
		}
	}
	var major, minor *uint64
	if image != nil {
		parts := strings.Split(strings.TrimPrefix(ptr.Deref(image.Version, ""), "v"), ".")
		if len(parts) == 3 {
			return image, nil
		}
		var err error
		if len(parts) == 2 && parts[1] != "" {
			if minor, err = parseVersionPart(parts[1]); err != nil {
				return nil, field.Invalid(path, ptr.Deref(image.Version, ""), err.Error())
			}
		}
		if parts[0] != "" {
			if major, err = parseVersionPart(parts[0]); err != nil {
				return nil, field.Invalid(path, ptr.Deref(image.Version, ""), err.Error())
			}
		}
	}
	var latest *semver
	for _, v := range chosen.Versions {
		sv, err := parseSemver(v.Version)
		if err != nil || !supportsArch(v, arch) || (major != nil && sv.major != *major) || (minor != nil && sv.minor != *minor) {
			continue
		}
		if c := classification(v.ExpirableVersion, now); c == gardencorev1beta1.ClassificationPreview || !c.IsActive() {
			continue
		}
		if latest == nil || latest.less(sv) {
			latest = &sv
		}
	}
	if latest == nil {
		return nil, field.Invalid(path, reference, "failed to determine latest machine image from cloud profile: the latest machine version has been removed")
	}
	out := &gardencorev1beta1.ShootMachineImage{Name: chosen.Name, Version: ptr.To(latest.String())}
	if image != nil {
		out.ProviderConfig = image.ProviderConfig
	}
	return out, nil
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
// naming the cloud profile are kept in sync.
func prepare(shoot, old *gardencorev1beta1.Shoot) {
	if old != nil {
		shoot.Spec.SeedName = old.Spec.SeedName
	}
	syncCloudProfileFields(old, shoot)
}

// syncCloudProfileFields mirrors Gardener's SyncCloudProfileFields.
func syncCloudProfileFields(old, shoot *gardencorev1beta1.Shoot) {
	if shoot.DeletionTimestamp != nil {
		return
	}
	v, verr := parseSemver(shoot.Spec.Kubernetes.Version)
	known := verr == nil
	spec := &shoot.Spec
	if known && !v.less(semver{major: 1, minor: 34}) {
		if spec.CloudProfile != nil && spec.CloudProfile.Kind == "" {
			spec.CloudProfile.Kind = v1beta1constants.CloudProfileReferenceKindCloudProfile
		}
		if old != nil && spec.CloudProfileName != nil && spec.CloudProfile != nil &&
			spec.CloudProfile.Kind == v1beta1constants.CloudProfileReferenceKindCloudProfile &&
			*spec.CloudProfileName == ptr.Deref(old.Spec.CloudProfileName, "") && *spec.CloudProfileName == spec.CloudProfile.Name {
			spec.CloudProfileName = nil
		}
		return
	}
	if spec.CloudProfile == nil && spec.CloudProfileName != nil {
		spec.CloudProfile = &gardencorev1beta1.CloudProfileReference{Kind: v1beta1constants.CloudProfileReferenceKindCloudProfile, Name: *spec.CloudProfileName}
	}
	if spec.CloudProfile != nil && spec.CloudProfile.Kind == "" {
		spec.CloudProfile.Kind = v1beta1constants.CloudProfileReferenceKindCloudProfile
	}
	name := ptr.Deref(spec.CloudProfileName, "")
	if spec.CloudProfile != nil && spec.CloudProfile.Kind == v1beta1constants.CloudProfileReferenceKindCloudProfile &&
		(!known || v.less(semver{major: 1, minor: 33}) || name != "" && name != spec.CloudProfile.Name) {
		spec.CloudProfileName = ptr.To(spec.CloudProfile.Name)
	}
	if spec.CloudProfile != nil && spec.CloudProfile.Kind != v1beta1constants.CloudProfileReferenceKindCloudProfile {
		spec.CloudProfileName = nil
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
