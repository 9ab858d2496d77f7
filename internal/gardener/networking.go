package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// DefaultNetworkingType is the network plugin used when the Runtime names none.
const DefaultNetworkingType = "calico"

// networking copies the network plugin (calico by default) and the CIDRs, and asks for IPv4
// and IPv6 when the Runtime does and the landscape allows it.
func networking(in infrav1.Networking, dualStackDisabled bool) *gardencorev1beta1.Networking {
	networkType := DefaultNetworkingType
	if in.Type != nil && *in.Type != "" {
		networkType = *in.Type
	}
	out := &gardencorev1beta1.Networking{
		Type:     ptr.To(networkType),
		Pods:     nonEmpty(in.Pods),
		Nodes:    nonEmpty(in.Nodes),
		Services: nonEmpty(in.Services),
	}
	if ptr.Deref(in.DualStack, false) && !dualStackDisabled {
		out.IPFamilies = []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4, gardencorev1beta1.IPFamilyIPv6}
	}
	return out
}
