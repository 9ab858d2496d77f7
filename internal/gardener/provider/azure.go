package provider

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	azurev1alpha1 "github.com/gardener/gardener-extension-provider-azure/pkg/apis/azure/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// azureAPIVersion is the azure extension's API group and version.
const azureAPIVersion = "azure.provider.extensions.gardener.cloud/v1alpha1"

// azureNATIdleTimeoutMinutes is the idle connection timeout upstream sets on every zone's NAT
// gateway (4 minutes, Azure's default and the extension's minimum).
const azureNATIdleTimeoutMinutes int32 = 4

// azureLayout is upstream's zoned azure layout: one /(p+3) subnet a zone, in zone order, each
// with its own NAT gateway; 10.250.0.0/22 gives 10.250.0.0/25, 10.250.0.128/25, 10.250.1.0/25.
var azureLayout = evenSlots(TypeAzure)

// azureProvider builds zoned configs, or Azure lite ones for a Runtime without zones. Azure
// lite is what upstream calls shoots without zones (the old non-zoned azure_lite plan): one
// subnet, networks.workers = nodes, in a VNet of nodes, not zoned, as the provisioner made
// them. A single zone is not lite: it gets the zoned layout with one subnet. Zones are never
// added to a config with a single subnet (Azure lite, or a zoned shoot of that older layout):
// its workers share the one subnet whatever their zone, Azure forbids making a non-zoned shoot
// zoned, and upstream leaves these configs alone too.
var azureProvider = provider{
	zone: azureZone,
	newInfrastructure: func(in Input, zones []string) (any, error) {
		nodes, err := azureLayout.parseNodes(in.Nodes)
		if err != nil {
			return nil, err
		}
		cfg := azurev1alpha1.InfrastructureConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: azureAPIVersion, Kind: "InfrastructureConfig"},
		}
		if err := setVNet(&cfg.Networks.VNet, in.VPCNetwork, nodes); err != nil {
			return nil, err
		}
		if len(zones) == 0 {
			if nodes.Bits() > azureLayout.longest(0) {
				return nil, azureLayout.tooSmall(nodes, 0)
			}
			cfg.Networks.Workers = ptr.To(nodes.String())
			return cfg, nil
		}
		cfg.Zoned = true
		if cfg.Networks.Zones, err = zoneEntries(azureLayout, nodes, 0, nil, zones, azureZoneEntry); err != nil {
			return nil, err
		}
		return cfg, nil
	},
	newControlPlane: func(Input, []string) (any, error) {
		return azurev1alpha1.ControlPlaneConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: azureAPIVersion, Kind: "ControlPlaneConfig"},
		}, nil
	},
	existingZones: func(raw []byte) ([]string, bool, error) {
		cfg, err := decodeAzure(raw)
		if err != nil {
			return nil, false, err
		}
		if len(cfg.Networks.Zones) == 0 {
			return nil, false, nil
		}
		names := make([]string, 0, len(cfg.Networks.Zones))
		for _, z := range cfg.Networks.Zones {
			names = append(names, strconv.Itoa(int(z.Name)))
		}
		return names, true, nil
	},
	addZones: func(in Input, raw []byte, zones []string) ([]byte, error) {
		cfg, err := decodeAzure(raw)
		if err != nil {
			return nil, err
		}
		var subnets []string
		for _, z := range cfg.Networks.Zones {
			subnets = append(subnets, z.CIDR)
		}
		return extend(azureLayout, in, raw, len(cfg.Networks.Zones), subnets, zones, azureZoneEntry)
	},
}

// azureZoneEntry is the entry of a zone (a zone number) with its subnet and a NAT gateway as
// upstream sets it for new zones.
func azureZoneEntry(name string, subnets []netip.Prefix) (azurev1alpha1.Zone, error) {
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return azurev1alpha1.Zone{}, fmt.Errorf("%w: azure zone %q is not a zone number such as 1", ErrInvalidZone, name)
	}
	return azurev1alpha1.Zone{
		Name: int32(n),
		CIDR: subnets[0].String(),
		NatGateway: &azurev1alpha1.ZonedNatGatewayConfig{
			Enabled:                      true,
			IdleConnectionTimeoutMinutes: ptr.To(azureNATIdleTimeoutMinutes),
		},
	}, nil
}

// azureZone checks that an Azure zone is a zone number and writes it without leading zeros,
// as the infrastructureConfig's numeric zone names read back.
func azureZone(name string) (string, error) {
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil || n < 1 {
		return "", fmt.Errorf("%w: azure zone %q is not a zone number such as 1", ErrInvalidZone, name)
	}
	return strconv.FormatInt(n, 10), nil
}

// setVNet points vnet at the existing VNet that vpcNetwork names, or at a new one of nodes.
// vpcNetwork is "<resourceGroup>/<vnetName>" or the VNet's resource id,
// /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<name>
// (the subscription must be the shoot's own; it is not part of the config).
func setVNet(vnet *azurev1alpha1.VNet, vpcNetwork string, nodes netip.Prefix) error {
	if vpcNetwork == "" {
		vnet.CIDR = ptr.To(nodes.String())
		return nil
	}
	var group, name string
	parts := strings.Split(strings.Trim(vpcNetwork, "/"), "/")
	switch {
	case len(parts) == 2:
		group, name = parts[0], parts[1]
	case len(parts) == 8 && strings.EqualFold(parts[0], "subscriptions") && strings.EqualFold(parts[2], "resourceGroups") &&
		strings.EqualFold(parts[4], "providers") && strings.EqualFold(parts[5], "Microsoft.Network") &&
		strings.EqualFold(parts[6], "virtualNetworks"):
		group, name = parts[3], parts[7]
	}
	if group == "" || name == "" {
		return fmt.Errorf("%w: spec.shoot.networking.vpcNetwork %q does not name an azure VNet: use <resourceGroup>/<vnetName> or the VNet's resource id",
			ErrInvalidVPCNetwork, vpcNetwork)
	}
	vnet.Name, vnet.ResourceGroup = ptr.To(name), ptr.To(group)
	return nil
}

func decodeAzure(raw []byte) (azurev1alpha1.InfrastructureConfig, error) {
	var cfg azurev1alpha1.InfrastructureConfig
	err := decode(TypeAzure, raw, &cfg)
	return cfg, err
}
