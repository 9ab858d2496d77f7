package provider

import (
	"fmt"
	"strings"

	gcpv1alpha1 "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gcpAPIVersion is the gcp extension's API group and version.
const gcpAPIVersion = "gcp.provider.extensions.gardener.cloud/v1alpha1"

// gcpProvider builds upstream's gcp configs: one worker subnet of the whole node network, set
// in networks.workers and in its deprecated twin networks.worker as upstream (and the
// provisioner before it) does, and the control plane in the first zone. Zones are not part of
// gcp's infrastructureConfig, so an existing one never changes.
var gcpProvider = provider{
	newInfrastructure: func(in Input, _ []string) (any, error) {
		nodes, err := parseNodes(in.Nodes)
		if err != nil {
			return nil, err
		}
		cfg := gcpv1alpha1.InfrastructureConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: gcpAPIVersion, Kind: "InfrastructureConfig"},
			Networks: gcpv1alpha1.NetworkConfig{Worker: nodes.String(), Workers: nodes.String()},
		}
		if in.VPCNetwork != "" {
			vpc, router, ok := strings.Cut(in.VPCNetwork, "/")
			if !ok || vpc == "" || router == "" || strings.Contains(router, "/") {
				return nil, fmt.Errorf("%w: spec.shoot.networking.vpcNetwork %q does not name a gcp VPC: use <vpcName>/<cloudRouterName>, as gcp reuses a VPC only with its Cloud Router",
					ErrInvalidVPCNetwork, in.VPCNetwork)
			}
			cfg.Networks.VPC = &gcpv1alpha1.VPC{Name: vpc, CloudRouter: &gcpv1alpha1.CloudRouter{Name: router}}
		}
		return cfg, nil
	},
	newControlPlane: func(_ Input, zones []string) (any, error) {
		if err := needZones(TypeGCP, zones); err != nil {
			return nil, err
		}
		return gcpv1alpha1.ControlPlaneConfig{
			TypeMeta: metav1.TypeMeta{APIVersion: gcpAPIVersion, Kind: "ControlPlaneConfig"},
			Zone:     zones[0],
		}, nil
	},
	existingZones: func(raw []byte) ([]string, bool, error) {
		var cfg gcpv1alpha1.InfrastructureConfig
		return nil, false, decode(TypeGCP, raw, &cfg)
	},
}
