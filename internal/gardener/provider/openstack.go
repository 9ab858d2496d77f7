package provider

import (
	openstackv1alpha1 "github.com/gardener/gardener-extension-provider-openstack/pkg/apis/openstack/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// openstackAPIVersion is the openstack extension's API group and version.
const openstackAPIVersion = "openstack.provider.extensions.gardener.cloud/v1alpha1"

// Values upstream takes from its landscape configuration; these are upstream's defaults until
// the landscape configuration makes them configurable here too.
const (
	// OpenStackFloatingPoolName is the floating IP pool of new openstack shoots
	// (infrastructureConfig floatingPoolName).
	OpenStackFloatingPoolName = "FloatingIP-external-kyma-01"
	// OpenStackLoadBalancerProvider is the load balancer provider of new openstack shoots
	// (controlPlaneConfig loadBalancerProvider).
	OpenStackLoadBalancerProvider = "f5"
)

// openstackProvider builds upstream's openstack configs: the whole node network as the worker
// subnet, behind the default floating pool. Zones are not part of openstack's
// infrastructureConfig, so an existing one never changes.
var openstackProvider = provider{
	newInfrastructure: func(in Input, _ []string) (any, error) {
		nodes, err := parseNodes(in.Nodes)
		if err != nil {
			return nil, err
		}
		cfg := openstackv1alpha1.InfrastructureConfig{
			TypeMeta:         metav1.TypeMeta{APIVersion: openstackAPIVersion, Kind: "InfrastructureConfig"},
			FloatingPoolName: OpenStackFloatingPoolName,
			Networks:         openstackv1alpha1.Networks{Workers: nodes.String()},
		}
		if in.VPCNetwork != "" {
			cfg.Networks.ID = ptr.To(in.VPCNetwork)
		}
		return cfg, nil
	},
	newControlPlane: func(Input, []string) (any, error) {
		return openstackv1alpha1.ControlPlaneConfig{
			TypeMeta:             metav1.TypeMeta{APIVersion: openstackAPIVersion, Kind: "ControlPlaneConfig"},
			LoadBalancerProvider: OpenStackLoadBalancerProvider,
		}, nil
	},
	existingZones: func(raw []byte) ([]string, bool, error) {
		var cfg openstackv1alpha1.InfrastructureConfig
		return nil, false, decode(TypeOpenStack, raw, &cfg)
	},
}
