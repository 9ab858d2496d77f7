package gardener

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener/provider"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// cloudProfiles maps a Runtime's spec.shoot.provider.type, which is also the Shoot's
// spec.provider.type, to the cloud profile the Shoot references, as upstream names them.
var cloudProfiles = map[string]string{
	"aws":       "aws",
	"azure":     "az",
	"gcp":       "gcp",
	"openstack": "converged-cloud-kyma",
	"alicloud":  "alicloud",
}

const (
	// cloudProfileKind is the kind of the cloud profile a Shoot references.
	cloudProfileKind = "CloudProfile"
	// credentialsBindingVersion is the first Kubernetes version whose shoots must name their
	// credentials by credentialsBindingName.
	credentialsBindingVersion = "1.34.0"
)

// useCredentialsBinding reports whether the Runtime's binding goes into credentialsBindingName
// rather than secretBindingName: from Kubernetes 1.34 on Gardener forbids secretBindingName, and
// a shoot already on a credentials binding cannot go back. Gardener allows the move from a
// secret binding to a credentials binding of the same name during the upgrade to 1.34; before
// that, a landscape that enables credentials bindings puts new shoots on them, while shoots on
// a secret binding stay there.
func (b *shootBuilder) useCredentialsBinding(version string) bool {
	if b.current != nil && b.current.Spec.CredentialsBindingName != nil {
		return true
	}
	if b.opts.CredentialsBinding && (b.current == nil || b.current.Spec.SecretBindingName == nil) { //nolint:staticcheck // SA1019: a shoot on a secret binding moves only with its upgrade to 1.34.
		return true
	}
	return version != "" && !versionLess(version, credentialsBindingVersion)
}

// providerConfigs returns the infrastructure and control plane configs: the Runtime's own when
// it carries them, else the ones the shoot has (extended by zones the Runtime added), else new
// ones with the layout upstream's shoots have.
func (b *shootBuilder) providerConfigs(pools []gardencorev1beta1.Worker) (provider.Configs, error) {
	in := b.rt.Spec.Shoot.Provider
	if err := b.checkInfrastructureIDs(in.InfrastructureConfig); err != nil {
		return provider.Configs{}, err
	}
	if in.InfrastructureConfig != nil && in.ControlPlaneConfig != nil {
		return provider.Configs{Infrastructure: in.InfrastructureConfig.DeepCopy(), ControlPlane: in.ControlPlaneConfig.DeepCopy()}, nil
	}
	var existing provider.Configs
	if b.current != nil {
		existing = provider.Configs{
			Infrastructure: b.current.Spec.Provider.InfrastructureConfig.DeepCopy(),
			ControlPlane:   b.current.Spec.Provider.ControlPlaneConfig.DeepCopy(),
		}
	}
	nw := b.rt.Spec.Shoot.Networking
	out, err := provider.Build(provider.Input{
		Type:       b.rt.Spec.Shoot.Provider.Type,
		Nodes:      nw.Nodes,
		Zones:      zonesOf(pools),
		DualStack:  ptr.Deref(nw.DualStack, false),
		VPCNetwork: ptr.Deref(nw.VPCNetwork, ""),
	}, existing)
	if err != nil {
		return provider.Configs{}, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("provider configs of runtime %s: %w", b.rt.Name, err))
	}
	if in.InfrastructureConfig != nil {
		out.Infrastructure = in.InfrastructureConfig.DeepCopy()
	}
	if in.ControlPlaneConfig != nil {
		out.ControlPlane = in.ControlPlaneConfig.DeepCopy()
	}
	return out, nil
}

// zonesOf returns the union of the pools' zones, in order of first appearance.
func zonesOf(pools []gardencorev1beta1.Worker) []string {
	var zones []string
	for _, w := range pools {
		for _, z := range w.Zones {
			if !slices.Contains(zones, z) {
				zones = append(zones, z)
			}
		}
	}
	return zones
}

// infrastructureIDs are, per provider type, the paths of an infrastructureConfig that name
// existing infrastructure (a VPC, a virtual network, a router) instead of letting the provider
// extension create the shoot's own.
var infrastructureIDs = map[string][][]string{
	"aws":       {{"networks", "vpc", "id"}},
	"alicloud":  {{"networks", "vpc", "id"}},
	"azure":     {{"resourceGroup"}, {"networks", "vnet", "name"}, {"networks", "vnet", "resourceGroup"}},
	"gcp":       {{"networks", "vpc", "name"}},
	"openstack": {{"networks", "id"}, {"networks", "router", "id"}, {"networks", "subnetId"}},
}

// checkInfrastructureIDs refuses a Runtime's infrastructureConfig that names existing
// infrastructure, unless the live shoot already uses the same: the landscape allows no shoot
// into a network it does not own, and a shoot that is there stays there.
func (b *shootBuilder) checkInfrastructureIDs(in *runtime.RawExtension) error {
	if in == nil || len(in.Raw) == 0 {
		return nil
	}
	var cfg, live map[string]any
	if err := json.Unmarshal(in.Raw, &cfg); err != nil {
		return refused(b.rt, "spec.shoot.provider.infrastructureConfig", "must be a JSON object")
	}
	if b.current != nil && b.current.Spec.Provider.InfrastructureConfig != nil {
		_ = json.Unmarshal(b.current.Spec.Provider.InfrastructureConfig.Raw, &live) // An unreadable live config allows nothing.
	}
	for _, path := range infrastructureIDs[b.rt.Spec.Shoot.Provider.Type] {
		v, ok := lookup(cfg, path)
		if !ok {
			continue
		}
		if lv, lok := lookup(live, path); lok && reflect.DeepEqual(v, lv) {
			continue
		}
		return refused(b.rt, "spec.shoot.provider.infrastructureConfig."+strings.Join(path, "."), "names existing infrastructure the landscape does not allow")
	}
	return nil
}

// lookup returns the value at path in a decoded JSON object.
func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, key := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}
