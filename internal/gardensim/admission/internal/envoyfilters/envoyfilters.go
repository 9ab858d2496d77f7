// Package envoyfilters holds the rule type of the acl extension's
// providerConfig. Its package and type names are those of
// gardener-extension-acl (pkg/envoyfilters), so that a decoding error reads
// exactly as the extension's webhook reports it.
package envoyfilters

// ACLRule is one rule of the acl extension: the CIDRs it applies to, its
// action (ALLOW or DENY) and its type (direct_remote_ip, remote_ip or
// source_ip).
type ACLRule struct {
	// Cidrs are the CIDR blocks the rule applies to.
	Cidrs []string `json:"cidrs"`
	// Action is ALLOW or DENY.
	Action string `json:"action"`
	// Type is direct_remote_ip, remote_ip or source_ip.
	Type string `json:"type"`
}
