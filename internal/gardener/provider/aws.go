package provider

import (
	"net/netip"

	awsv1alpha1 "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// awsAPIVersion is the aws extension's API group and version.
const awsAPIVersion = "aws.provider.extensions.gardener.cloud/v1alpha1"

// awsSmallestSubnet is the longest prefix of an AWS subnet.
const awsSmallestSubnet = 28

// awsLayout is upstream's aws layout. Nodes n.n.0.0/p is cut into four /(p+2) blocks. Each of
// the first three zones takes one: workers /(p+3), then public and internal /(p+4). The fourth
// block holds up to five more zones with workers, public and internal /(p+6) each, one after
// the other. For 10.250.0.0/16: 10.250.0.0/19, 10.250.32.0/20, 10.250.48.0/20 for the first
// zone, 10.250.64.0/19, ... for the second, and 10.250.192.0/22, 10.250.196.0/22,
// 10.250.200.0/22 for the fourth. AWS subnets are /28 at the smallest and a VPC /16 at the
// largest, so nodes takes /16 to /24, or /16 to /22 with more than three zones.
var awsLayout = layout{
	provider: TypeAWS,
	maxZones: 8,
	shortest: 16,
	longest: func(i int) int {
		if i < 3 {
			return awsSmallestSubnet - 4
		}
		return awsSmallestSubnet - 6
	},
	slot: func(nodes netip.Prefix, i int) []netip.Prefix {
		p := nodes.Bits()
		if i < 3 {
			block := uint32(i) * size(p+2)
			return []netip.Prefix{
				subnet(nodes, block, p+3),
				subnet(nodes, block+size(p+3), p+4),
				subnet(nodes, block+size(p+3)+size(p+4), p+4),
			}
		}
		small := size(p + 6)
		start := 3*size(p+2) + uint32(i-3)*3*small
		return []netip.Prefix{
			subnet(nodes, start, p+6),
			subnet(nodes, start+small, p+6),
			subnet(nodes, start+2*small, p+6),
		}
	},
}

var awsProvider = provider{
	zone: nonEmptyZone(TypeAWS),
	newInfrastructure: func(in Input, zones []string) (any, error) {
		if err := needZones(TypeAWS, zones); err != nil {
			return nil, err
		}
		nodes, err := awsLayout.parseNodes(in.Nodes)
		if err != nil {
			return nil, err
		}
		entries, err := zoneEntries(awsLayout, nodes, 0, nil, zones, awsZone)
		if err != nil {
			return nil, err
		}
		cfg := awsv1alpha1.InfrastructureConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: awsAPIVersion, Kind: "InfrastructureConfig"},
			Networks: awsv1alpha1.Networks{Zones: entries},
		}
		if in.VPCNetwork != "" {
			cfg.Networks.VPC.ID = ptr.To(in.VPCNetwork)
		} else {
			cfg.Networks.VPC.CIDR = ptr.To(nodes.String())
		}
		if in.DualStack {
			cfg.DualStack = &awsv1alpha1.DualStack{Enabled: true}
		}
		return cfg, nil
	},
	newControlPlane: func(Input, []string) (any, error) {
		return awsv1alpha1.ControlPlaneConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: awsAPIVersion, Kind: "ControlPlaneConfig"},
		}, nil
	},
	existingZones: func(raw []byte) ([]string, bool, error) {
		cfg, err := decodeAWS(raw)
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
		cfg, err := decodeAWS(raw)
		if err != nil {
			return nil, err
		}
		var subnets []string
		for _, z := range cfg.Networks.Zones {
			subnets = append(subnets, z.Workers, z.Public, z.Internal)
		}
		return extend(awsLayout, in, raw, len(cfg.Networks.Zones), subnets, zones, awsZone)
	},
}

// awsZone is the entry of a zone with its workers, public and internal subnets.
func awsZone(name string, subnets []netip.Prefix) (awsv1alpha1.Zone, error) {
	return awsv1alpha1.Zone{
		Name:     name,
		Workers:  subnets[0].String(),
		Public:   subnets[1].String(),
		Internal: subnets[2].String(),
	}, nil
}

func decodeAWS(raw []byte) (awsv1alpha1.InfrastructureConfig, error) {
	var cfg awsv1alpha1.InfrastructureConfig
	err := decode(TypeAWS, raw, &cfg)
	return cfg, err
}
