package gardener

import (
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Names of where a Shoot runs and who may operate it.
const (
	// LabelSeedRegion is the Seed label that spec.seedSelector matches when a Runtime enforces
	// its seed location.
	LabelSeedRegion = "seed.gardener.cloud/region"
	// AccessRestrictionEUAccess keeps a shoot's nodes and add-ons operated from the EU only.
	AccessRestrictionEUAccess = "eu-access-only"
)

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

// accessRestrictions keeps the runtimes of the EU platform regions operated from the EU only.
func accessRestrictions(rt *infrav1.Runtime) []gardencorev1beta1.AccessRestrictionWithOptions {
	if !slices.Contains(euAccessPlatformRegions, rt.Spec.Shoot.PlatformRegion) {
		return nil
	}
	return []gardencorev1beta1.AccessRestrictionWithOptions{{
		AccessRestriction: gardencorev1beta1.AccessRestriction{Name: AccessRestrictionEUAccess},
		Options: map[string]string{
			"support.gardener.cloud/eu-access-for-cluster-addons": "true",
			"support.gardener.cloud/eu-access-for-cluster-nodes":  "true",
		},
	}}
}

// euAccessPlatformRegions are the platform regions whose runtimes are operated from the EU only.
var euAccessPlatformRegions = []string{"cf-eu11", "cf-ch20"}

// tolerations returns the tolerations the landscape gives shoots of rt's region.
func (b *shootBuilder) tolerations() []gardencorev1beta1.Toleration {
	return slices.Clone(b.opts.Tolerations[b.rt.Spec.Shoot.Region])
}
