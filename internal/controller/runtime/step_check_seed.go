package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

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
// Seeds are read from the API server, not a watch; this runs once per shoot creation, and a list
// that found a serving seed is reused for the shoots of its region created within
// SeedListTTL (see seedLists). A list without one is never reused: the failure is always fresh.
func (s steps) checkSeed(ctx context.Context, rt *infrav1.Runtime) error {
	sh := rt.Spec.Shoot
	if sh.EnforceSeedLocation == nil || !*sh.EnforceSeedLocation {
		return nil
	}
	serves := func(seeds []gardencorev1beta1.Seed) bool {
		return slices.ContainsFunc(seeds, func(seed gardencorev1beta1.Seed) bool { return seedServes(&seed, sh.Provider.Type, sh.Region) })
	}
	if seeds, ok := s.seeds.recent(sh.Region); ok && serves(seeds) {
		return nil
	}
	seeds := &gardencorev1beta1.SeedList{}
	if err := s.Garden.List(ctx, seeds, client.MatchingLabels{gardener.LabelSeedRegion: sh.Region}); err != nil {
		return fmt.Errorf("list seeds in region %s: %w", sh.Region, err)
	}
	if serves(seeds.Items) {
		s.seeds.remember(sh.Region, seeds.Items)
		return nil
	}
	return retry.Terminal(ReasonSeedNotFound, fmt.Errorf(
		"no ready seed of provider %s in region %s, and spec.shoot.enforceSeedLocation is true: choose another region or stop enforcing the seed location",
		sh.Provider.Type, sh.Region))
}

// DefaultSeedListTTL is how long the manager reuses a region's seed list that served a shoot.
const DefaultSeedListTTL = 30 * time.Second

// seedLists keeps, per region, the last seed list that served a shoot, for a while: a thousand
// Runtimes created at once then cost Gardener one list per region instead of a thousand, and
// the requests left are the writes. A seed that went unready within the while is still taken
// as serving; Gardener then leaves the shoot unscheduled, which the shoot's deadline catches, as
// it catches a seed that goes unready just after the check. A nil *seedLists keeps nothing.
type seedLists struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	byRegion map[string]seedList
}

type seedList struct {
	at    time.Time
	seeds []gardencorev1beta1.Seed
}

// newSeedLists returns lists kept for ttl by now's clock; a ttl of zero or less keeps none.
func newSeedLists(ttl time.Duration, now func() time.Time) *seedLists {
	if ttl <= 0 {
		return nil
	}
	return &seedLists{ttl: ttl, now: now, byRegion: map[string]seedList{}}
}

// recent returns the region's list when it is younger than the ttl.
func (l *seedLists) recent(region string) ([]gardencorev1beta1.Seed, bool) {
	if l == nil {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byRegion[region]
	if !ok || l.now().Sub(e.at) >= l.ttl {
		return nil, false
	}
	return e.seeds, true
}

// remember keeps the region's list as of now.
func (l *seedLists) remember(region string, seeds []gardencorev1beta1.Seed) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byRegion[region] = seedList{at: l.now(), seeds: seeds}
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
