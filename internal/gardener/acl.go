package gardener

import (
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// ExtensionACL is the Gardener extension that restricts which networks reach the shoot's
// API server.
const ExtensionACL = "acl"

// ACL is what every API server access list includes besides the Runtime's own networks, so
// that neither the operators nor the control plane (this manager included) lock themselves out.
type ACL struct {
	// OperatorCIDRs are the operators' networks.
	OperatorCIDRs []string
	// ControlPlaneCIDR is the control plane's external NAT address.
	ControlPlaneCIDR string
}

// aclProviders are the provider types whose load balancers preserve the client address, which
// the ACL extension needs.
var aclProviders = []string{"aws", "azure"}

// ACLProviders lists the provider types whose shoots can restrict their API server.
func ACLProviders() []string { return slices.Clone(aclProviders) }

// NeedsACL reports whether rt restricts its API server to its own networks, on a provider that
// supports the ACL extension: the runtimes whose shoot depends on the landscape's ACL addresses.
func NeedsACL(rt *infrav1.Runtime) bool {
	acl := rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL
	return acl != nil && len(acl.AllowedCIDRs) > 0 && slices.Contains(aclProviders, rt.Spec.Shoot.Provider.Type)
}

// aclExtension restricts the API server to the Runtime's networks plus the operators' and the
// control plane's, on the providers that support it, when the landscape enables ACLs. A Runtime
// without networks gets the extension explicitly disabled, so removing the ACL lifts it. With
// ACLs off nothing is listed.
func (b *shootBuilder) aclExtension() *gardencorev1beta1.Extension {
	acl := b.opts.ACL
	if acl == nil || !slices.Contains(aclProviders, b.rt.Spec.Shoot.Provider.Type) {
		return nil
	}
	if !NeedsACL(b.rt) {
		return &gardencorev1beta1.Extension{Type: ExtensionACL, Disabled: ptr.To(true)}
	}
	var cidrs []string
	for _, c := range slices.Concat(b.rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL.AllowedCIDRs, acl.OperatorCIDRs, []string{acl.ControlPlaneCIDR}) {
		if c != "" && !slices.Contains(cidrs, c) {
			cidrs = append(cidrs, c)
		}
	}
	return &gardencorev1beta1.Extension{
		Type:     ExtensionACL,
		Disabled: ptr.To(false),
		ProviderConfig: rawJSON(aclConfig{Rule: aclRule{
			Action: "ALLOW",
			Type:   "remote_ip",
			CIDRs:  cidrs,
		}}),
	}
}

// aclConfig is the ACL extension's providerConfig.
type aclConfig struct {
	Rule aclRule `json:"rule"`
}

type aclRule struct {
	Action string   `json:"action"`
	Type   string   `json:"type"`
	CIDRs  []string `json:"cidrs"`
}
