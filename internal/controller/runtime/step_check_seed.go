package runtime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Reasons the Runtime controller reports.
const (
	// ReasonSeedNotFound: the Runtime enforces its seed location and no ready seed serves its
	// provider and region, so Gardener could never schedule the shoot. Upstream names it so.
	ReasonSeedNotFound = "SeedNotFound"
	// ReasonShootRefused: Gardener's admission refused the shoot (403), which no retry changes.
	ReasonShootRefused = "ShootRefused"
	// ReasonVersionsAsRequested: the shoot runs the requested versions.
	ReasonVersionsAsRequested = "AsRequested"
	// ReasonDowngradeRefused: a requested version is below the running one and was kept.
	ReasonDowngradeRefused = "DowngradeRefused"
)

// checkSeed fails as a user error when the Runtime enforces its seed location and no ready seed
// of its provider type serves its region: Gardener would leave such a shoot unscheduled until
// the step's deadline, while the user can fix it now (another region, or no enforcement).
// Seeds are read from the API server, not a cache; this runs once per shoot creation.
func (s steps) checkSeed(ctx context.Context, rt *infrav1.Runtime) error {
	sh := rt.Spec.Shoot
	if sh.EnforceSeedLocation == nil || !*sh.EnforceSeedLocation {
		return nil
	}
	seeds := &gardencorev1beta1.SeedList{}
	if err := s.Garden.List(ctx, seeds, client.MatchingLabels{gardener.LabelSeedRegion: sh.Region}); err != nil {
		return fmt.Errorf("list seeds in region %s: %w", sh.Region, err)
	}
	for i := range seeds.Items {
		if seedServes(&seeds.Items[i], sh.Provider.Type, sh.Region) {
			return nil
		}
	}
	return retry.Terminal(ReasonSeedNotFound, fmt.Errorf(
		"no ready seed of provider %s in region %s, and spec.shoot.enforceSeedLocation is true: choose another region or stop enforcing the seed location",
		sh.Provider.Type, sh.Region))
}

// seedServes reports whether seed can host a shoot of the provider type in region: its
// provider and region match, it is visible and schedulable, and its gardenlet reports ready.
func seedServes(seed *gardencorev1beta1.Seed, providerType, region string) bool {
	if seed.Spec.Provider.Type != providerType || seed.Spec.Provider.Region != region || seed.DeletionTimestamp != nil {
		return false
	}
	if seed.Spec.Settings != nil && seed.Spec.Settings.Scheduling != nil && !seed.Spec.Settings.Scheduling.Visible {
		return false
	}
	for _, c := range seed.Status.Conditions {
		if c.Type == gardencorev1beta1.GardenletReady {
			return c.Status == gardencorev1beta1.ConditionTrue
		}
	}
	return false
}
