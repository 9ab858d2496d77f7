package gardensim

import (
	"context"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admin"
)

// Seed labels, as Kyma's landscapes label their seeds.
const (
	// LabelSeedRegion is the label a seedSelector enforcing the seed
	// location matches.
	LabelSeedRegion = "seed.gardener.cloud/region"
	// LabelSeedProvider is the seed's provider type.
	LabelSeedProvider = "seed.gardener.cloud/provider"
)

// createCloudProfiles writes the simulator's CloudProfiles into the garden.
func createCloudProfiles(ctx context.Context, c client.Client, profiles []gardencorev1beta1.CloudProfile) error {
	for i := range profiles {
		p := profiles[i].DeepCopy()
		if err := c.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create cloud profile %s: %w", p.Name, err)
		}
	}
	return nil
}

// The seeds' DNS: one provider type and the credentials Secret in the garden namespace.
const (
	dnsProviderType = "aws-route53"
	internalDomain  = "internal.sim.gardener.local"
)

var dnsCredentials = corev1.ObjectReference{
	APIVersion: "v1", Kind: "Secret", Namespace: v1beta1constants.GardenNamespace, Name: "dns-credentials",
}

// seedName is the name of the seed of a provider type and region.
func seedName(providerType, region string) string { return providerType + "-" + region }

// createSeeds writes one Seed per provider and region of the profiles,
// with the status of a healthy seed, unready in the regions listed.
func createSeeds(ctx context.Context, c client.Client, profiles []gardencorev1beta1.CloudProfile, unready []string) error {
	for _, p := range profiles {
		for _, r := range p.Spec.Regions {
			seed := newSeed(p.Spec.Type, r)
			status := seed.Status
			if err := c.Create(ctx, seed); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create seed %s: %w", seed.Name, err)
			}
			seed.Status = status
			setSeedReady(seed, !slices.Contains(unready, r.Name))
			if err := c.Status().Update(ctx, seed); err != nil {
				return fmt.Errorf("set status of seed %s: %w", seed.Name, err)
			}
		}
	}
	return nil
}

// newSeed is a seed as a gardenlet registers it, supporting the access
// restrictions its region offers.
func newSeed(providerType string, region gardencorev1beta1.Region) *gardencorev1beta1.Seed {
	var zones []string
	for _, z := range region.Zones {
		zones = append(zones, z.Name)
	}
	now := metav1.Now()
	return &gardencorev1beta1.Seed{
		ObjectMeta: metav1.ObjectMeta{
			Name:   seedName(providerType, region.Name),
			Labels: map[string]string{LabelSeedRegion: region.Name, LabelSeedProvider: providerType},
		},
		Spec: gardencorev1beta1.SeedSpec{
			Provider:           gardencorev1beta1.SeedProvider{Type: providerType, Region: region.Name, Zones: zones},
			AccessRestrictions: region.AccessRestrictions,
			Networks:           gardencorev1beta1.SeedNetworks{Nodes: ptr.To("10.242.0.0/16"), Pods: "10.243.128.0/17", Services: "10.243.0.0/17"},
			Settings:           &gardencorev1beta1.SeedSettings{Scheduling: &gardencorev1beta1.SeedSettingScheduling{Visible: true}},
			Ingress: &gardencorev1beta1.Ingress{
				Domain:     "ingress." + seedName(providerType, region.Name) + ".seeds.sim.gardener.local",
				Controller: gardencorev1beta1.IngressController{Kind: "nginx"},
			},
			DNS: gardencorev1beta1.SeedDNS{
				Provider: &gardencorev1beta1.SeedDNSProvider{Type: dnsProviderType, CredentialsRef: &dnsCredentials},
				Internal: &gardencorev1beta1.SeedDNSProviderConfig{
					Type: dnsProviderType, Domain: internalDomain, CredentialsRef: dnsCredentials,
				},
			},
		},
		Status: gardencorev1beta1.SeedStatus{
			Gardener:          &gardencorev1beta1.Gardener{ID: "gardensim", Name: "gardensim", Version: "v1.140.1"},
			KubernetesVersion: ptr.To("1.33.4"),
			LastOperation: &gardencorev1beta1.LastOperation{
				Type: gardencorev1beta1.LastOperationTypeReconcile, State: gardencorev1beta1.LastOperationStateSucceeded,
				Progress: 100, Description: "Seed cluster has been successfully reconciled.", LastUpdateTime: now,
			},
		},
	}
}

// seedConditions are the conditions of a healthy seed.
var seedConditions = []struct {
	typ             gardencorev1beta1.ConditionType
	reason, message string
}{
	{gardencorev1beta1.GardenletReady, "GardenletReady", "Gardenlet is posting ready status."},
	{gardencorev1beta1.SeedBackupBucketsReady, "BackupBucketsAvailable", "Backup Buckets are available."},
	{gardencorev1beta1.SeedExtensionsReady, "AllExtensionsReady", "All extensions installed into the seed cluster are ready and healthy."},
	{gardencorev1beta1.SeedSystemComponentsHealthy, "SystemComponentsRunning", "All system components are healthy."},
}

// setSeedReady gives the seed the conditions of a healthy seed, or those
// of a seed whose gardenlet stopped posting its status.
func setSeedReady(seed *gardencorev1beta1.Seed, ready bool) {
	now := metav1.Now()
	var conds []gardencorev1beta1.Condition
	for _, c := range seedConditions {
		cond := gardencorev1beta1.Condition{Type: c.typ, Status: gardencorev1beta1.ConditionTrue, Reason: c.reason, Message: c.message, LastTransitionTime: now, LastUpdateTime: now}
		if !ready {
			cond.Status, cond.Reason, cond.Message = gardencorev1beta1.ConditionUnknown, "SeedStatusUnknown", "Gardenlet stopped posting seed status."
		}
		for _, old := range seed.Status.Conditions {
			if old.Type == c.typ && old.Status == cond.Status {
				cond.LastTransitionTime = old.LastTransitionTime
			}
		}
		conds = append(conds, cond)
	}
	seed.Status.Conditions = conds
}

// Seeds reports every seed of the garden and whether it is ready.
func (s *Simulator) Seeds(ctx context.Context) ([]admin.SeedState, error) {
	list := &gardencorev1beta1.SeedList{}
	if err := s.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	out := make([]admin.SeedState, 0, len(list.Items))
	for i := range list.Items {
		seed := &list.Items[i]
		out = append(out, admin.SeedState{Name: seed.Name, Provider: seed.Spec.Provider.Type, Region: seed.Spec.Provider.Region, Ready: seedReady(seed)})
	}
	return out, nil
}

// SetRegionReady makes every seed of region (of any provider) ready or, as
// when its gardenlet stops posting status, unready: Gardener's scheduler
// then places no new shoot there, and a shoot whose seedSelector enforces
// that region stays unscheduled until the region is ready again.
func (s *Simulator) SetRegionReady(ctx context.Context, region string, ready bool) error {
	list := &gardencorev1beta1.SeedList{}
	if err := s.client.List(ctx, list); err != nil {
		return fmt.Errorf("list seeds: %w", err)
	}
	found := false
	for i := range list.Items {
		seed := &list.Items[i]
		if seed.Spec.Provider.Region != region {
			continue
		}
		found = true
		setSeedReady(seed, ready)
		if err := s.client.Status().Update(ctx, seed); err != nil {
			return fmt.Errorf("set readiness of seed %s: %w", seed.Name, err)
		}
	}
	if !found {
		return fmt.Errorf("%w: no seed in region %q", admin.ErrNotFound, region)
	}
	return nil
}

// applySeedReadiness makes the regions listed unready and every other
// region ready.
func (s *Simulator) applySeedReadiness(ctx context.Context, unready []string) error {
	list := &gardencorev1beta1.SeedList{}
	if err := s.client.List(ctx, list); err != nil {
		return fmt.Errorf("list seeds: %w", err)
	}
	for i := range list.Items {
		seed := &list.Items[i]
		ready := !slices.Contains(unready, seed.Spec.Provider.Region)
		if seedReady(seed) == ready {
			continue
		}
		setSeedReady(seed, ready)
		if err := s.client.Status().Update(ctx, seed); err != nil {
			return fmt.Errorf("set readiness of seed %s: %w", seed.Name, err)
		}
	}
	return nil
}

// seedReady reports whether a seed is ready as gardener-scheduler sees it: it has a last
// operation and its gardenlet is ready (the simulator's seeds have no backup).
func seedReady(s *gardencorev1beta1.Seed) bool {
	if s.Status.LastOperation == nil {
		return false
	}
	for _, c := range s.Status.Conditions {
		if c.Type == gardencorev1beta1.GardenletReady {
			return c.Status == gardencorev1beta1.ConditionTrue
		}
	}
	return false
}
