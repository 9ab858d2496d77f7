package admission

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// maxProjectAndShootName is the longest project name plus shoot name
// Gardener accepts on creation.
const maxProjectAndShootName = 21

// shootValidator is the ShootValidator plugin: the shoot against its
// CloudProfile. Name length problems are 422 Invalid, everything else one
// 403 listing every problem.
func (c *check) shootValidator(ctx context.Context) error {
	if c.profile == nil {
		return nil
	}
	if c.op == Update && reflect.DeepEqual(c.shoot.Spec, c.old.Spec) && reflect.DeepEqual(c.shoot.ObjectMeta, c.old.ObjectMeta) {
		return nil
	}
	if c.op == Create {
		project := ProjectName(c.shoot.Namespace)
		if len(project+c.shoot.Name) > maxProjectAndShootName {
			return apierrors.NewInvalid(shootKind, c.shoot.Name, field.ErrorList{field.Invalid(field.NewPath("name"), c.shoot.Name,
				fmt.Sprintf("the length of the shoot name and the project name must not exceed %d characters (project: %s; shoot: %s)", maxProjectAndShootName, project, c.shoot.Name))})
		}
	}
	seed, err := c.seed(ctx)
	if err != nil {
		return err
	}
	var errs field.ErrorList
	errs = append(errs, c.validateKubernetesVersion()...)
	errs = append(errs, c.validateRegion()...)
	errs = append(errs, c.validateAccessRestrictions(seed)...)
	errs = append(errs, c.validateWorkers()...)
	if len(errs) > 0 {
		return forbiddenList(c.shoot.Name, errs)
	}
	return nil
}

// validateKubernetesVersion: a changed version must be offered; a new
// shoot may not use an expired one.
func (c *check) validateKubernetesVersion() field.ErrorList {
	return c.versionOffered(c.shoot.Spec.Kubernetes.Version, c.old.Spec.Kubernetes.Version, false, field.NewPath("spec", "kubernetes", "version"))
}

func (c *check) versionOffered(version, old string, newPool bool, path *field.Path) field.ErrorList {
	if version == old {
		return nil
	}
	var valid []string
	for _, v := range c.profile.Spec.Kubernetes.Versions {
		if (c.op == Create || newPool) && !classification(v, c.now).IsActive() {
			continue
		}
		if v.Version == version {
			return nil
		}
		s := v.Version
		if ptr.Deref(v.Classification, "") == gardencorev1beta1.ClassificationPreview { //nolint:staticcheck // SA1019: Gardener's ShootValidator marks preview versions by the deprecated field, not the lifecycle.
			s += " (preview)"
		}
		valid = append(valid, s)
	}
	return field.ErrorList{field.NotSupported(path, version, valid)}
}

// validateRegion: a changed region must be offered.
func (c *check) validateRegion() field.ErrorList {
	region := c.shoot.Spec.Region
	if region == c.old.Spec.Region {
		return nil
	}
	var valid []string
	for _, r := range c.profile.Spec.Regions {
		valid = append(valid, r.Name)
		if r.Name == region {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(field.NewPath("spec", "region"), region, valid)}
}

// seed is the seed the shoot is bound to; nil if none. A missing seed is
// the plugin's internal error.
func (c *check) seed(ctx context.Context) (*gardencorev1beta1.Seed, error) {
	if c.shoot.Spec.SeedName == nil {
		return nil, nil
	}
	seed, err := c.env.Seed(ctx, *c.shoot.Spec.SeedName)
	if apierrors.IsNotFound(err) {
		err = apierrors.NewNotFound(gardencorev1beta1.Resource("seed"), *c.shoot.Spec.SeedName)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("could not find referenced seed %q: %+v", *c.shoot.Spec.SeedName, err.Error()))
	}
	return seed, nil
}

// validateAccessRestrictions: changed access restrictions must be offered by
// the shoot's region in the profile and, once the shoot has a seed, be
// supported by the seed.
func (c *check) validateAccessRestrictions(seed *gardencorev1beta1.Seed) field.ErrorList {
	names, oldNames := accessRestrictionNames(c.shoot.Spec.AccessRestrictions), accessRestrictionNames(c.old.Spec.AccessRestrictions)
	if names.Equal(oldNames) {
		return nil
	}
	i := slices.IndexFunc(c.profile.Spec.Regions, func(r gardencorev1beta1.Region) bool { return r.Name == c.shoot.Spec.Region })
	if i < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "region"), c.shoot.Spec.Region, "region not present in CloudProfile")}
	}
	offered := sets.New[string]()
	for _, r := range c.profile.Spec.Regions[i].AccessRestrictions {
		offered.Insert(r.Name)
	}
	var errs field.ErrorList
	path := field.NewPath("spec", "accessRestrictions")
	for j, r := range c.shoot.Spec.AccessRestrictions {
		if !offered.Has(r.Name) {
			// Gardener lists the offered names in random order; the
			// simulator sorts them.
			errs = append(errs, field.NotSupported(path.Index(j), r.Name, sets.List(offered)))
		}
	}
	if seed == nil {
		return errs
	}
	supported := sets.New[string]()
	for _, r := range seed.Spec.AccessRestrictions {
		supported.Insert(r.Name)
	}
	for j, r := range c.shoot.Spec.AccessRestrictions {
		if !supported.Has(r.Name) {
			errs = append(errs, field.Forbidden(path.Index(j), fmt.Sprintf("access restriction %q is not supported by the seed", r.Name)))
		}
	}
	return errs
}

// accessRestrictionNames are the names of the restrictions.
func accessRestrictionNames(restrictions []gardencore.AccessRestrictionWithOptions) sets.Set[string] {
	names := sets.New[string]()
	for _, r := range restrictions {
		names.Insert(r.Name)
	}
	return names
}

// validateWorkers mirrors validateProvider of the plugin.
func (c *check) validateWorkers() field.ErrorList {
	path := field.NewPath("spec", "provider")
	if c.shoot.Spec.Provider.Type != c.profile.Spec.Type {
		return field.ErrorList{field.Invalid(path.Child("type"), c.shoot.Spec.Provider.Type,
			fmt.Sprintf("provider type in shoot must equal provider type of referenced CloudProfile: %q", c.profile.Spec.Type))}
	}
	if _, err := parseSemver(c.shoot.Spec.Kubernetes.Version); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "kubernetes", "version"), c.shoot.Spec.Kubernetes.Version, fmt.Sprintf("cannot parse the kubernetes version: %v", err))}
	}
	var errs field.ErrorList
	for i, w := range c.shoot.Spec.Provider.Workers {
		wp := path.Child("workers").Index(i)
		old, isNew := c.oldWorker(w.Name)
		if err := c.validateMachine(wp, w, old, isNew); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, c.validateCRI(wp.Child("cri"), w, old)...)
		}
		if err := c.validateVolume(wp, w, old); err != nil {
			errs = append(errs, err)
		}
		if w.Kubernetes != nil && w.Kubernetes.Version != nil {
			oldVersion := c.old.Spec.Kubernetes.Version
			if old.Kubernetes != nil && old.Kubernetes.Version != nil {
				oldVersion = *old.Kubernetes.Version
			}
			errs = append(errs, c.versionOffered(*w.Kubernetes.Version, oldVersion, isNew, wp.Child("kubernetes", "version"))...)
		}
		errs = append(errs, c.validateZones(wp, w, old)...)
	}
	return errs
}

// oldWorker is the pool of the same name in the old shoot, or an empty one
// for a new pool.
func (c *check) oldWorker(name string) (gardencore.Worker, bool) {
	for _, w := range c.old.Spec.Provider.Workers {
		if w.Name == name {
			return w, false
		}
	}
	return gardencore.Worker{Machine: gardencore.Machine{Image: &gardencore.ShootMachineImage{}}}, true
}

// validateMachine checks architecture, machine type and machine image.
func (c *check) validateMachine(path *field.Path, w, old gardencore.Worker, isNew bool) *field.Error {
	arch := ptr.Deref(w.Machine.Architecture, "")
	if w.Machine.Architecture != nil && !slices.Contains(v1beta1constants.ValidArchitectures, arch) {
		return field.NotSupported(path.Child("machine", "architecture"), arch, v1beta1constants.ValidArchitectures)
	}
	if err := c.validateMachineType(path, w, old); err != nil {
		return err
	}
	return c.validateMachineImage(path, w, old, isNew)
}

func (c *check) validateMachineType(path *field.Path, w, old gardencore.Worker) *field.Error {
	if w.Machine.Type == old.Machine.Type && ptr.Equal(w.Machine.Architecture, old.Machine.Architecture) {
		return nil
	}
	arch, found := ptr.Deref(w.Machine.Architecture, ""), false
	withArch, inAllZones, usable := sets.New[string](), sets.New[string](), sets.New[string]()
	for _, t := range c.profile.Spec.MachineTypes {
		if ptr.Deref(t.Architecture, v1beta1constants.ArchitectureAMD64) == arch {
			withArch.Insert(t.Name)
		}
		if ptr.Deref(t.Usable, false) {
			usable.Insert(t.Name)
		}
		if !c.unavailableInAZone(w.Zones, t.Name, func(z gardencorev1beta1.AvailabilityZone) []string { return z.UnavailableMachineTypes }) {
			inAllZones.Insert(t.Name)
		}
		found = found || t.Name == w.Machine.Type
	}
	supported := sets.List(withArch.Intersection(inAllZones).Intersection(usable))
	if !found {
		return field.NotSupported(path.Child("machine", "type"), w.Machine.Type, supported)
	}
	if withArch.Has(w.Machine.Type) && inAllZones.Has(w.Machine.Type) && usable.Has(w.Machine.Type) {
		return nil
	}
	detail := fmt.Sprintf("machine type %q ", w.Machine.Type)
	if !usable.Has(w.Machine.Type) {
		detail += "is unusable, "
	}
	if !inAllZones.Has(w.Machine.Type) {
		detail += "is unavailable in at least one zone, "
	}
	if !withArch.Has(w.Machine.Type) {
		detail += fmt.Sprintf("does not support CPU architecture %q, ", arch)
	}
	return field.Invalid(path.Child("machine", "type"), w.Machine.Type, fmt.Sprintf("%ssupported types are %+v", detail, supported))
}

func (c *check) validateMachineImage(path *field.Path, w, old gardencore.Worker, isNew bool) *field.Error {
	if apiequality.Semantic.DeepEqual(w.Machine.Image, old.Machine.Image) && ptr.Equal(w.Machine.Architecture, old.Machine.Architecture) {
		return nil
	}
	arch := ptr.Deref(w.Machine.Architecture, "")
	offered := c.imageVersions(w.Machine.Image, old, isNew, arch)
	valid := sets.List(offered.usable.Intersection(offered.withArch))
	if w.Machine.Image == nil || w.Machine.Image.Version == "" {
		return field.NotSupported(path.Child("machine", "image", "version"), imageVersion(w.Machine.Image), valid)
	}
	name := w.Machine.Image.Name + ":" + w.Machine.Image.Version
	if !offered.all.Has(name) {
		return field.NotSupported(path.Child("machine", "image", "version"), w.Machine.Image.Version, valid)
	}
	if offered.withArch.Has(name) && offered.usable.Has(name) {
		return nil
	}
	detail := fmt.Sprintf("machine image version '%s:%s' ", w.Machine.Image.Name, w.Machine.Image.Version)
	if !offered.withArch.Has(name) {
		detail += fmt.Sprintf("does not support CPU architecture %q, ", arch)
	}
	if !offered.usable.Has(name) {
		detail += "is expired, "
	}
	return field.Invalid(path.Child("machine", "image"), w.Machine.Image, fmt.Sprintf("%ssupported machine image versions are: %+v", detail, valid))
}

// offeredImageVersions are image versions of the profile, as
// "name:version".
type offeredImageVersions struct {
	// all are every version of the pool's image (of every image if the
	// pool names none).
	all sets.Set[string]
	// usable are those the pool may use: active ones, and for an existing
	// pool expired ones that are no downgrade.
	usable sets.Set[string]
	// withArch are those that support the pool's architecture.
	withArch sets.Set[string]
}

// imageVersions collects the profile's versions of the pool's image.
func (c *check) imageVersions(image *gardencore.ShootMachineImage, old gardencore.Worker, isNew bool, arch string) offeredImageVersions {
	offered := offeredImageVersions{all: sets.New[string](), usable: sets.New[string](), withArch: sets.New[string]()}
	for _, profileImage := range c.profile.Spec.MachineImages {
		if image != nil && image.Name != profileImage.Name {
			continue
		}
		for _, v := range profileImage.Versions {
			name := profileImage.Name + ":" + v.Version
			if c.imageVersionUsable(v, old, isNew) {
				offered.usable.Insert(name)
			}
			if supportsArch(v, arch) {
				offered.withArch.Insert(name)
			}
			offered.all.Insert(name)
		}
	}
	return offered
}

// imageVersionUsable reports whether a pool may use an image version: an
// active one, or for an existing pool an expired one that is no downgrade,
// as maintenance force-updates need it.
func (c *check) imageVersionUsable(v gardencorev1beta1.MachineImageVersion, old gardencore.Worker, isNew bool) bool {
	cl := classification(v.ExpirableVersion, c.now)
	if cl.IsActive() {
		return true
	}
	if c.op == Update && !isNew && cl == gardencorev1beta1.ClassificationExpired {
		down, _ := versionLess(v.Version, old.Machine.Image.Version)
		return !down
	}
	return false
}

func imageVersion(i *gardencore.ShootMachineImage) string {
	if i == nil {
		return ""
	}
	return i.Version
}

// validateCRI: the pool's container runtime must be one its image
// version supports.
func (c *check) validateCRI(path *field.Path, w, old gardencore.Worker) field.ErrorList {
	if w.CRI == nil || w.Machine.Image == nil {
		return nil
	}
	if apiequality.Semantic.DeepEqual(w.CRI, old.CRI) && apiequality.Semantic.DeepEqual(w.Machine.Image, old.Machine.Image) {
		return nil
	}
	for _, image := range c.profile.Spec.MachineImages {
		if image.Name != w.Machine.Image.Name {
			continue
		}
		for _, v := range image.Versions {
			if v.Version != w.Machine.Image.Version {
				continue
			}
			valid := []string{}
			for _, cri := range v.CRI {
				valid = append(valid, string(cri.Name))
				if string(cri.Name) == string(w.CRI.Name) {
					return nil
				}
			}
			return field.ErrorList{field.Invalid(path.Child("name"), w.CRI.Name, fmt.Sprintf("machine image '%s@%s' does not support CRI '%s', supported values: %+v",
				w.Machine.Image.Name, w.Machine.Image.Version, w.CRI.Name, valid))}
		}
	}
	return nil
}

// validateVolume: a changed volume type must be offered, usable and
// available in the pool's zones; the size must meet the minimum.
func (c *check) validateVolume(path *field.Path, w, old gardencore.Worker) *field.Error {
	vol := w.Volume
	if vol == nil || vol.Type == nil || (old.Volume != nil && old.Volume.Type != nil && *vol.Type == *old.Volume.Type) {
		return c.validateVolumeSize(path, w)
	}
	found, inAllZones, usable := false, sets.New[string](), sets.New[string]()
	for _, v := range c.profile.Spec.VolumeTypes {
		if ptr.Deref(v.Usable, false) {
			usable.Insert(v.Name)
		}
		if !c.unavailableInAZone(w.Zones, v.Name, func(z gardencorev1beta1.AvailabilityZone) []string { return z.UnavailableVolumeTypes }) {
			inAllZones.Insert(v.Name)
		}
		found = found || v.Name == *vol.Type
	}
	supported := sets.List(usable.Intersection(inAllZones))
	if !found {
		return field.NotSupported(path.Child("volume", "type"), *vol.Type, supported)
	}
	if !inAllZones.Has(*vol.Type) || !usable.Has(*vol.Type) {
		detail := fmt.Sprintf("volume type %q ", *vol.Type)
		if !usable.Has(*vol.Type) {
			detail += "is unusable, "
		}
		if !inAllZones.Has(*vol.Type) {
			detail += "is unavailable in at least one zone, "
		}
		return field.Invalid(path.Child("volume", "type"), *vol.Type, fmt.Sprintf("%ssupported types are %+v", detail, supported))
	}
	return c.validateVolumeSize(path, w)
}

func (c *check) validateVolumeSize(path *field.Path, w gardencore.Worker) *field.Error {
	vol := w.Volume
	if vol == nil || vol.Type == nil {
		return nil
	}
	size, err := resource.ParseQuantity(vol.VolumeSize)
	if err != nil {
		return nil //nolint:nilerr // As Gardener's ShootValidator: an unparsable size is the static validation's to refuse.
	}
	for _, t := range c.profile.Spec.MachineTypes {
		if t.Name == w.Machine.Type && t.Storage != nil && t.Storage.MinSize != nil && t.Storage.Type == *vol.Type && size.Cmp(*t.Storage.MinSize) < 0 {
			return field.Invalid(path.Child("volume", "size"), vol.VolumeSize, fmt.Sprintf("size must be >= %s", t.Storage.MinSize.String()))
		}
	}
	for _, v := range c.profile.Spec.VolumeTypes {
		if v.Name == *vol.Type && v.MinSize != nil && size.Cmp(*v.MinSize) < 0 {
			return field.Invalid(path.Child("volume", "size"), vol.VolumeSize, fmt.Sprintf("size must be >= %s", v.MinSize.String()))
		}
	}
	return nil
}

// validateZones: changed zones must be zones of the shoot's region, each
// once.
func (c *check) validateZones(path *field.Path, w, old gardencore.Worker) field.ErrorList {
	if c.shoot.Spec.Region == c.old.Spec.Region && reflect.DeepEqual(w.Zones, old.Zones) {
		return nil
	}
	var errs field.ErrorList
	used := sets.New[string]()
	for j, zone := range w.Zones {
		zp := path.Child("zones").Index(j)
		if ok, valid := c.zoneOffered(zone); !ok {
			if len(valid) == 0 {
				errs = append(errs, field.Invalid(zp, c.shoot.Spec.Region, "this region does not support availability zones, please do not configure them"))
			} else {
				errs = append(errs, field.NotSupported(zp, zone, valid))
			}
		}
		if used.Has(zone) {
			errs = append(errs, field.Duplicate(zp, zone))
		}
		used.Insert(zone)
	}
	return errs
}

func (c *check) zoneOffered(zone string) (bool, []string) {
	var valid []string
	for _, r := range c.profile.Spec.Regions {
		if r.Name != c.shoot.Spec.Region {
			continue
		}
		for _, z := range r.Zones {
			valid = append(valid, z.Name)
			if z.Name == zone {
				return true, nil
			}
		}
		break
	}
	return false, valid
}

// unavailableInAZone reports whether a machine or volume type is listed as
// unavailable in one of zones of the shoot's region.
func (c *check) unavailableInAZone(zones []string, name string, unavailable func(gardencorev1beta1.AvailabilityZone) []string) bool {
	for _, r := range c.profile.Spec.Regions {
		if r.Name != c.shoot.Spec.Region {
			continue
		}
		for _, z := range r.Zones {
			if slices.Contains(zones, z.Name) && slices.Contains(unavailable(z), name) {
				return true
			}
		}
	}
	return false
}
