// Package extensionspec holds the providerConfig of the acl extension. Its
// package and type names are those of gardener-extension-acl
// (pkg/extensionspec), so that a decoding error reads exactly as the
// extension's webhook reports it.
package extensionspec

import "github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/internal/envoyfilters"

// ExtensionSpec is the providerConfig of the acl extension.
type ExtensionSpec struct {
	// Rule is the access control rule.
	Rule *envoyfilters.ACLRule `json:"rule"`
}
