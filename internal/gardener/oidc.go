package gardener

import (
	"encoding/base64"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// OpenIDConnectGVK is the kind the shoot-oidc-service extension serves in a shoot cluster: one
// object registers one OIDC provider with the cluster's API server.
var OpenIDConnectGVK = schema.GroupVersionKind{
	Group:   "authentication.gardener.cloud",
	Version: "v1alpha1",
	Kind:    "OpenIDConnect",
}

// OpenIDConnectName names the OpenIDConnect of the i-th additional OIDC provider. The name is
// also the provider's default user and group prefix ("kyma-oidc-0/") when the Runtime sets
// none, so a provider keeps its prefix as long as the list keeps its order.
func OpenIDConnectName(i int) string {
	return fmt.Sprintf("kyma-oidc-%d", i)
}

// AdditionalOIDC returns the additional OIDC providers of rt: its own, or, when it leaves them
// unset, the landscape's shared default; nil when there is neither.
func AdditionalOIDC(rt *infrav1.Runtime, sharedDefault *infrav1.OIDCConfig) *[]infrav1.OIDCConfig {
	if extra := rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig; extra != nil || sharedDefault == nil {
		return extra
	}
	return &[]infrav1.OIDCConfig{*sharedDefault.DeepCopy()}
}

// OpenIDConnects returns the OpenIDConnect resources, ready for a server-side apply, that
// register rt's additional OIDC providers (spec.shoot.kubernetes.kubeAPIServer.
// additionalOidcConfig) in the runtime cluster; none when it has none. Fields the Runtime leaves
// unset are left out, so the extension's defaults apply. The Runtime's CA bundle is PEM text;
// OpenIDConnect carries it as bytes, which JSON holds in base64.
//
// The main provider (oidcConfig) is not among them: it is part of the Shoot's kube-apiserver.
// A Runtime that leaves additionalOidcConfig unset (nil, not empty) gets the landscape's shared
// identity tenant, sharedDefault, as its one additional provider, as upstream does.
func OpenIDConnects(rt *infrav1.Runtime, sharedDefault *infrav1.OIDCConfig) []*unstructured.Unstructured {
	extra := AdditionalOIDC(rt, sharedDefault)
	if extra == nil {
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(*extra))
	for i, cfg := range *extra {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": openIDConnectSpec(cfg)}}
		u.SetGroupVersionKind(OpenIDConnectGVK)
		u.SetName(OpenIDConnectName(i))
		out = append(out, u)
	}
	return out
}

// openIDConnectSpec maps one OIDC provider of the Runtime to an OpenIDConnect spec.
func openIDConnectSpec(in infrav1.OIDCConfig) map[string]any {
	spec := map[string]any{}
	setString := func(field string, v *string) {
		if v != nil {
			spec[field] = *v
		}
	}
	setString("issuerURL", in.IssuerURL)
	setString("clientID", in.ClientID)
	setString("usernameClaim", in.UsernameClaim)
	setString("usernamePrefix", in.UsernamePrefix)
	setString("groupsClaim", in.GroupsClaim)
	setString("groupsPrefix", in.GroupsPrefix)
	if len(in.SigningAlgs) > 0 {
		algs := make([]any, len(in.SigningAlgs))
		for i, a := range in.SigningAlgs {
			algs[i] = a
		}
		spec["supportedSigningAlgs"] = algs
	}
	if len(in.RequiredClaims) > 0 {
		claims := make(map[string]any, len(in.RequiredClaims))
		for k, v := range maps.All(in.RequiredClaims) {
			claims[k] = v
		}
		spec["requiredClaims"] = claims
	}
	if in.CABundle != nil && *in.CABundle != "" {
		spec["caBundle"] = base64.StdEncoding.EncodeToString([]byte(*in.CABundle))
	}
	if len(in.JWKS) > 0 {
		// The key set the issuer would serve, given offline: the authenticator then skips the
		// issuer's jwks_uri.
		spec["jwks"] = map[string]any{"keys": base64.StdEncoding.EncodeToString(in.JWKS)}
	}
	return spec
}
