package gardener

import (
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// TrimShoot is the garden cache's transform for shoots. A cached shoot answers the questions a
// step asks of it without a request: whose it is, how far Gardener got, where it runs. The one
// step that compares the whole spec with the render, ApplyShoot, reads the shoot from Gardener
// when it has to compare, that is when its verdict does not stand (a new process, or a changed
// Runtime, generation, label or annotation), so no cached shoot needs the spec the render
// compares. It was more than half of a cached shoot.
//
// The trim keeps:
//   - the metadata but the managedFields, with the labels and annotations Gardener writes for
//     itself dropped (OwnKey): their values change as Gardener works, and no step reads
//     them;
//   - of the spec, what the steps besides ApplyShoot read: the seed, the domain, the IP families
//     and the infrastructure configuration (the provisioning info and the GardenerCluster
//     carry them);
//   - of the status, the last operation, the last errors, the observed generation and the
//     advertised addresses (the GardenerCluster controller asks for a kubeconfig only once the
//     API server has one). The health conditions, constraints, credentials rotation and
//     networks are no step's business.
//
// The settings and the last operation's words repeat across a fleet: each is kept once
// (package intern). It trims shoot in place and returns it.
func TrimShoot(shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	shoot.ManagedFields = nil
	shoot.Labels = withoutOwnKeys(shoot.Labels)
	shoot.Annotations = withoutOwnKeys(shoot.Annotations)
	shoot.Spec = specStepsRead(&shoot.Spec)
	shoot.Status = gardencorev1beta1.ShootStatus{
		LastOperation:       shoot.Status.LastOperation,
		LastErrors:          shoot.Status.LastErrors,
		ObservedGeneration:  shoot.Status.ObservedGeneration,
		AdvertisedAddresses: shoot.Status.AdvertisedAddresses,
	}
	intern.Strings(&shoot.Spec)
	if op := shoot.Status.LastOperation; op != nil {
		op.Description = intern.String(op.Description)
		op.Type = gardencorev1beta1.LastOperationType(intern.String(string(op.Type)))
		op.State = gardencorev1beta1.LastOperationState(intern.String(string(op.State)))
	}
	for i := range shoot.Status.AdvertisedAddresses {
		a := &shoot.Status.AdvertisedAddresses[i]
		a.Name = intern.String(a.Name)
	}
	return shoot
}

// specStepsRead is the part of a shoot's spec that the steps read from the cache: the seed and
// the infrastructure configuration (provisioning info), the IP families (whether the runtime is
// dual-stack) and the domain (the GardenerCluster's skr-domain annotation).
func specStepsRead(spec *gardencorev1beta1.ShootSpec) gardencorev1beta1.ShootSpec {
	out := gardencorev1beta1.ShootSpec{
		SeedName: spec.SeedName,
		Provider: gardencorev1beta1.Provider{Type: spec.Provider.Type, InfrastructureConfig: spec.Provider.InfrastructureConfig},
	}
	if n := spec.Networking; n != nil && len(n.IPFamilies) > 0 {
		out.Networking = &gardencorev1beta1.Networking{IPFamilies: n.IPFamilies}
	}
	if d := spec.DNS; d != nil && d.Domain != nil {
		out.DNS = &gardencorev1beta1.DNS{Domain: d.Domain}
	}
	return out
}

// gardenerKeys are labels and annotations that Gardener puts on a shoot for its own work:
// which extensions, seed and operating system it uses, who created it, and the tasks of the
// running operation. The render sets none of them (TestRenderSetsNoKeyOfGardenersOwn), and no step
// reads them.
var gardenerKeys = map[string]bool{
	"gardener.cloud/created-by":   true,
	"shoot.gardener.cloud/tasks":  true,
	"shoot.gardener.cloud/status": true,
	"gardener.cloud/timestamp":    true,
}

// OwnKey reports whether key is a label or annotation Gardener writes on a shoot for its
// own work: one of gardenerKeys, or one in an extension's (*.extensions.gardener.cloud) or a
// seed's (name.seed.gardener.cloud) domain. The garden cache drops them, so a change of them is
// no change of the shoot to ApplyShoot's verdict either.
func OwnKey(key string) bool {
	if gardenerKeys[key] {
		return true
	}
	prefix, _, ok := strings.Cut(key, "/")
	return ok && (strings.HasSuffix(prefix, ".extensions.gardener.cloud") || prefix == "name.seed.gardener.cloud")
}

// withoutOwnKeys returns m without Gardener's own keys (OwnKey), nil when nothing is
// left.
func withoutOwnKeys(m map[string]string) map[string]string {
	for k := range m {
		if OwnKey(k) {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
