package provider

import (
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The alicloud extension's module, github.com/gardener/gardener-extension-provider-alicloud, is
// not served by the Go module proxy, so it cannot be required like the other extensions. The
// few types of its pkg/apis/alicloud/v1alpha1 that the configs need are declared here instead,
// with the extension's JSON field names and tags (a deprecated field without omitempty
// included, so that the encoding is the one the real types, and upstream, produce). Only
// what this package writes or reads is here; fields it does not know survive an update
// because zones are added by editing the JSON (see appendZones).

// alicloudAPIVersion is the alicloud extension's API group and version.
const alicloudAPIVersion = "alicloud.provider.extensions.gardener.cloud/v1alpha1"

// alicloudInfrastructureConfig is the extension's InfrastructureConfig.
type alicloudInfrastructureConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Networks specifies the networks for an infrastructure.
	Networks alicloudNetworks `json:"networks"`
}

// alicloudNetworks is the extension's Networks.
type alicloudNetworks struct {
	// VPC says whether to create a new VPC or use an existing one.
	VPC alicloudVPC `json:"vpc"`
	// Zones are the network zones.
	Zones []alicloudZone `json:"zones"`
}

// alicloudVPC is the extension's VPC.
type alicloudVPC struct {
	// ID is the ID of an existing VPC.
	ID *string `json:"id,omitempty"`
	// CIDR is the CIDR of a VPC to create.
	CIDR *string `json:"cidr,omitempty"`
}

// alicloudZone is the extension's Zone.
type alicloudZone struct {
	// Name is the name of the zone.
	Name string `json:"name"`
	// Worker is the deprecated twin of Workers.
	Worker string `json:"worker"`
	// Workers is the zone's worker CIDR.
	Workers string `json:"workers"`
	// NatGateway configures the zone's NAT gateway.
	NatGateway *alicloudNatGatewayConfig `json:"natGateway,omitempty"`
}

// alicloudNatGatewayConfig is the extension's NatGatewayConfig.
type alicloudNatGatewayConfig struct {
	// EIPAllocationID is the EIP bound to the NAT gateway.
	EIPAllocationID *string `json:"eipAllocationID,omitempty"`
}

// alicloudControlPlaneConfig is the extension's ControlPlaneConfig, without the fields this
// package never sets.
type alicloudControlPlaneConfig struct {
	metav1.TypeMeta `json:",inline"`
}

// alicloudLayout is upstream's alicloud layout: one /(p+3) vswitch a zone, in zone order;
// 10.250.0.0/16 gives 10.250.0.0/19, 10.250.32.0/19, 10.250.64.0/19. Upstream sets no NAT
// gateway config on new zones (the extension creates one NAT gateway with a new EIP), so
// natGateway appears only where an existing shoot has it.
var alicloudLayout = evenSlots(TypeAlicloud)

var alicloudProvider = provider{
	zone: nonEmptyZone(TypeAlicloud),
	newInfrastructure: func(in Input, zones []string) (any, error) {
		if err := needZones(TypeAlicloud, zones); err != nil {
			return nil, err
		}
		nodes, err := alicloudLayout.parseNodes(in.Nodes)
		if err != nil {
			return nil, err
		}
		entries, err := zoneEntries(alicloudLayout, nodes, 0, nil, zones, alicloudZoneEntry)
		if err != nil {
			return nil, err
		}
		cfg := alicloudInfrastructureConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: alicloudAPIVersion, Kind: "InfrastructureConfig"},
			Networks: alicloudNetworks{Zones: entries},
		}
		if in.VPCNetwork != "" {
			cfg.Networks.VPC.ID = ptr.To(in.VPCNetwork)
		} else {
			cfg.Networks.VPC.CIDR = ptr.To(nodes.String())
		}
		return cfg, nil
	},
	newControlPlane: func(Input, []string) (any, error) {
		return alicloudControlPlaneConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: alicloudAPIVersion, Kind: "ControlPlaneConfig"},
		}, nil
	},
	existingZones: func(raw []byte) ([]string, bool, error) {
		cfg, err := decodeAlicloud(raw)
		if err != nil {
			return nil, false, err
		}
		var names []string
		for _, z := range cfg.Networks.Zones {
			names = append(names, z.Name)
		}
		return names, true, nil
	},
	addZones: func(in Input, raw []byte, zones []string) ([]byte, error) {
		cfg, err := decodeAlicloud(raw)
		if err != nil {
			return nil, err
		}
		var subnets []string
		for _, z := range cfg.Networks.Zones {
			subnets = append(subnets, z.Workers, z.Worker)
		}
		return extend(alicloudLayout, in, raw, len(cfg.Networks.Zones), subnets, zones, alicloudZoneEntry)
	},
}

// alicloudZoneEntry is the entry of a zone with its workers subnet.
func alicloudZoneEntry(name string, subnets []netip.Prefix) (alicloudZone, error) {
	return alicloudZone{Name: name, Workers: subnets[0].String()}, nil
}

func decodeAlicloud(raw []byte) (alicloudInfrastructureConfig, error) {
	var cfg alicloudInfrastructureConfig
	err := decode(TypeAlicloud, raw, &cfg)
	return cfg, err
}
