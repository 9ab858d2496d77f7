package provider

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Provider types, as in a Runtime's spec.shoot.provider.type.
const (
	TypeAWS       = "aws"
	TypeAzure     = "azure"
	TypeGCP       = "gcp"
	TypeOpenStack = "openstack"
	TypeAlicloud  = "alicloud"
)

// Errors of Build, for errors.Is. None of them goes away on a retry: each means the
// Runtime (or the shoot's current config) has to change.
var (
	// ErrUnsupportedProvider means the provider type is none of the Type constants.
	ErrUnsupportedProvider = errors.New("unsupported provider type")
	// ErrInvalidNodes means spec.shoot.networking.nodes is not a canonical IPv4 CIDR, or is
	// larger than the provider's network can be.
	ErrInvalidNodes = errors.New("invalid node network")
	// ErrNodesTooSmall means spec.shoot.networking.nodes has no room for the zones' subnets.
	ErrNodesTooSmall = errors.New("node network too small")
	// ErrNoZones means the provider needs at least one worker zone and the Runtime has none.
	ErrNoZones = errors.New("no zones")
	// ErrTooManyZones means the zones are more than the subnet layout has room for.
	ErrTooManyZones = errors.New("too many zones")
	// ErrInvalidZone means a zone name the provider cannot use, such as an Azure zone that is
	// not a number.
	ErrInvalidZone = errors.New("invalid zone")
	// ErrInvalidVPCNetwork means spec.shoot.networking.vpcNetwork does not name a network in the
	// form the provider needs.
	ErrInvalidVPCNetwork = errors.New("invalid vpc network")
	// ErrMalformedExisting means the shoot's current spec.provider.infrastructureConfig does not
	// decode with the provider's type, so zones cannot be added to it safely.
	ErrMalformedExisting = errors.New("malformed existing provider config")
)

// Input is what the generators read from a Runtime.
type Input struct {
	// Type is spec.shoot.provider.type: one of the Type constants.
	Type string
	// Nodes is spec.shoot.networking.nodes, e.g. 10.250.0.0/16: a canonical IPv4 CIDR. aws,
	// azure and alicloud split it into per-zone subnets and take /16 to /24 (aws with more than
	// three zones: /16 to /22); gcp and openstack use it whole.
	Nodes string
	// Zones is the union of all worker pools' zones, in order of first appearance. aws,
	// alicloud and gcp need at least one; azure without zones is Azure lite (one subnet, not
	// zoned) and azure zones are numbers ("1", "2", "3").
	Zones []string
	// DualStack is spec.shoot.networking.dualStack. Only aws has it in its infrastructureConfig
	// (dualStack.enabled); it is ignored for azure, gcp, openstack and alicloud, where dual
	// stack, if at all, comes from the Shoot's spec.networking.ipFamilies.
	DualStack bool
	// VPCNetwork is spec.shoot.networking.vpcNetwork: an existing network to use instead of
	// creating one (empty: create one). aws and alicloud take a VPC id, openstack a network
	// id, azure "<resourceGroup>/<vnetName>" or the VNet's resource id, gcp
	// "<vpcName>/<cloudRouterName>" (gcp cannot reuse a VPC without its Cloud Router).
	VPCNetwork string
}

// Configs are a Shoot's provider configs as JSON (apiVersion and kind set, deterministic encoding).
type Configs struct {
	// Infrastructure is spec.provider.infrastructureConfig.
	Infrastructure *runtime.RawExtension
	// ControlPlane is spec.provider.controlPlaneConfig.
	ControlPlane *runtime.RawExtension
}

// Build returns the configs for in. existing holds the shoot's current configs (zero value when
// the shoot does not exist yet).
//
// Without an existing infrastructureConfig, Build generates one from in.Nodes and in.Zones with
// upstream's layout. With one, Build returns it as it is (the same pointer, the same bytes)
// unless in.Zones has a zone it does not declare; then it appends subnets for the new zones in
// the next free slots of the same layout and keeps everything else, existing zones and fields
// this package does not know included. Zones are never removed, and configs without per-zone
// subnets (gcp, openstack, single-subnet azure such as Azure lite) never change. An existing
// controlPlaneConfig is always returned as it is; a missing one is generated. Build does not
// copy what it returns unchanged.
func Build(in Input, existing Configs) (Configs, error) {
	p, err := lookup(in.Type)
	if err != nil {
		return Configs{}, err
	}
	zones, err := p.normalize(in.Zones)
	if err != nil {
		return Configs{}, err
	}

	var out Configs
	if existing.Infrastructure == nil {
		v, err := p.newInfrastructure(in, zones)
		if err != nil {
			return Configs{}, err
		}
		if out.Infrastructure, err = encode(v); err != nil {
			return Configs{}, err
		}
	} else if out.Infrastructure, err = p.update(in, zones, existing.Infrastructure); err != nil {
		return Configs{}, err
	}

	if existing.ControlPlane != nil {
		out.ControlPlane = existing.ControlPlane
		return out, nil
	}
	v, err := p.newControlPlane(in, zones)
	if err != nil {
		return Configs{}, err
	}
	if out.ControlPlane, err = encode(v); err != nil {
		return Configs{}, err
	}
	return out, nil
}

// provider is one hyperscaler's generator. Every function is pure.
type provider struct {
	// zone validates a zone name and returns it in the form the infrastructureConfig uses;
	// nil takes names as they are.
	zone func(name string) (string, error)
	// newInfrastructure returns the infrastructureConfig of a new shoot.
	newInfrastructure func(in Input, zones []string) (any, error)
	// newControlPlane returns the controlPlaneConfig of a new shoot.
	newControlPlane func(in Input, zones []string) (any, error)
	// existingZones decodes an existing infrastructureConfig and returns the zones it declares.
	// open is false when the config has no per-zone subnets, so that no zone is ever added.
	existingZones func(raw []byte) (zones []string, open bool, err error)
	// addZones returns raw with subnets for the zones appended after the existing ones.
	addZones func(in Input, raw []byte, zones []string) ([]byte, error)
}

// providers holds the generators by provider type.
var providers = map[string]provider{
	TypeAWS:       awsProvider,
	TypeAzure:     azureProvider,
	TypeGCP:       gcpProvider,
	TypeOpenStack: openstackProvider,
	TypeAlicloud:  alicloudProvider,
}

func lookup(t string) (provider, error) {
	p, ok := providers[t]
	if !ok {
		names := make([]string, 0, len(providers))
		for name := range providers {
			names = append(names, name)
		}
		slices.Sort(names)
		return provider{}, fmt.Errorf("%w: %q (want one of %s)", ErrUnsupportedProvider, t, strings.Join(names, ", "))
	}
	return p, nil
}

// normalize drops repeated zones and puts the names in the provider's form.
func (p provider) normalize(zones []string) ([]string, error) {
	out := make([]string, 0, len(zones))
	for _, z := range zones {
		if p.zone != nil {
			var err error
			if z, err = p.zone(z); err != nil {
				return nil, err
			}
		}
		if !slices.Contains(out, z) {
			out = append(out, z)
		}
	}
	return out, nil
}

// update returns the existing infrastructureConfig, extended by the zones it lacks.
func (p provider) update(in Input, zones []string, existing *runtime.RawExtension) (*runtime.RawExtension, error) {
	have, open, err := p.existingZones(existing.Raw)
	if err != nil {
		return nil, err
	}
	if !open {
		return existing, nil
	}
	var add []string
	for _, z := range zones {
		if !slices.Contains(have, z) {
			add = append(add, z)
		}
	}
	if len(add) == 0 {
		return existing, nil
	}
	raw, err := p.addZones(in, existing.Raw, add)
	if err != nil {
		return nil, err
	}
	return &runtime.RawExtension{Raw: raw}, nil
}

// needZones returns ErrNoZones when zones is empty.
func needZones(provider string, zones []string) error {
	if len(zones) == 0 {
		return fmt.Errorf("%w: %s needs at least one worker zone in spec.shoot.provider.workers", ErrNoZones, provider)
	}
	return nil
}

// malformed wraps a decoding error of an existing infrastructureConfig.
func malformed(provider string, err error) error {
	return fmt.Errorf("%w: %s spec.provider.infrastructureConfig: %w", ErrMalformedExisting, provider, err)
}
