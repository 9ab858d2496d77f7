package admission

import (
	"fmt"
	"slices"

	awsinstall "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/install"
	azureinstall "github.com/gardener/gardener-extension-provider-azure/pkg/apis/azure/install"
	gcpinstall "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp/install"
	openstackinstall "github.com/gardener/gardener-extension-provider-openstack/pkg/apis/openstack/install"
	gardencore "github.com/gardener/gardener/pkg/apis/core"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The paths the provider extensions name.
var (
	specPath        = field.NewPath("spec")
	networkingPath  = specPath.Child("networking")
	providerPath    = specPath.Child("provider")
	infraConfigPath = providerPath.Child("infrastructureConfig")
	cpConfigPath    = providerPath.Child("controlPlaneConfig")
	workersPath     = providerPath.Child("workers")
)

// The extensions decode provider configurations strictly (new objects)
// or leniently (stored objects) into their internal types, with the API
// types they serve; alicloud's, whose module the simulator lacks, has a
// decoder of its own.
var (
	strictDecoder  runtime.Decoder
	lenientDecoder runtime.Decoder
)

func init() {
	scheme := runtime.NewScheme()
	awsinstall.Install(scheme)
	azureinstall.Install(scheme)
	gcpinstall.Install(scheme)
	openstackinstall.Install(scheme)
	strictDecoder = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder()
	lenientDecoder = serializer.NewCodecFactory(scheme).UniversalDecoder()
}

// decodeErrorText is the error text of a decode as the extensions print it
// (without the simulator's own context).
func decodeErrorText(d runtime.Decoder, raw *runtime.RawExtension, into runtime.Object) error {
	_, _, err := d.Decode(raw.Raw, nil, into)
	return err //nolint:wrapcheck // The extensions answer with the decoder's text verbatim; context of the simulator's would change their message.
}

// aggregate is the extensions' errs.ToAggregate(): nil for no errors, else
// the field errors whose text the webhook denies with.
func aggregate(errs field.ErrorList) error {
	return errs.ToAggregate() //nolint:wrapcheck // The webhook's message is the aggregate's text verbatim, as the extensions return it.
}

// regionZones are the zone names of the shoot's region in the profile, in
// profile order.
func (c *check) regionZones() []string {
	for _, r := range c.profile.Spec.Regions {
		if r.Name == c.shoot.Spec.Region {
			var zones []string
			for _, z := range r.Zones {
				zones = append(zones, z.Name)
			}
			return zones
		}
	}
	return nil
}

// validateWorkerZones is the common worker check of aws and alicloud: a
// pool needs a volume and zones, each of which the infrastructureConfig
// must configure.
func validateWorkerZones(w gardencore.Worker, infraZones []string, path *field.Path, volume func(*gardencore.Volume, *field.Path) field.ErrorList) field.ErrorList {
	var errs field.ErrorList
	if w.Volume == nil {
		errs = append(errs, field.Required(path.Child("volume"), "must not be nil"))
	} else {
		errs = append(errs, volume(w.Volume, path.Child("volume"))...)
	}
	if len(w.Zones) == 0 {
		return append(errs, field.Required(path.Child("zones"), "at least one zone must be configured"))
	}
	for i, z := range w.Zones {
		if !slices.Contains(infraZones, z) {
			errs = append(errs, field.Invalid(path.Child("zones").Index(i), z, fmt.Sprintf("supported values %v", infraZones)))
		}
	}
	return errs
}

// volumeSizeAndType wants both set.
func volumeSizeAndType(v *gardencore.Volume, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v.VolumeSize == "" {
		errs = append(errs, field.Required(path.Child("size"), "must not be empty"))
	}
	if v.Type == nil {
		errs = append(errs, field.Required(path.Child("type"), "must not be empty"))
	}
	return errs
}

// validateWorkersZonesUpdate is the common update check: a pool's zones
// may only be appended to.
func validateWorkersZonesUpdate(workers, old []gardencore.Worker, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, w := range workers {
		for _, o := range old {
			if w.Name == o.Name {
				if shouldEnforceImmutability(w.Zones, o.Zones) && !slices.Equal(w.Zones, o.Zones) {
					errs = append(errs, field.Invalid(path.Index(i).Child("zones"), w.Zones, "field is immutable"))
				}
				break
			}
		}
	}
	return errs
}
