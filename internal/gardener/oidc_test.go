package gardener

import (
	"encoding/base64"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

func TestOpenIDConnectsFromFixture(t *testing.T) {
	t.Parallel()
	rt := readFixture(t, "aws.yaml")

	got := OpenIDConnects(rt, nil)

	if len(got) != 1 {
		t.Fatalf("got %d OpenIDConnects, want 1 for the fixture's one additional provider", len(got))
	}
	oidc := got[0]
	if oidc.GroupVersionKind() != OpenIDConnectGVK {
		t.Errorf("kind = %v, want %v", oidc.GroupVersionKind(), OpenIDConnectGVK)
	}
	expectEqual(t, "name", oidc.GetName(), "kyma-oidc-0")
	expectEqual(t, "namespace", oidc.GetNamespace(), "")
	expectDeepEqual(t, "spec", oidc.Object["spec"], map[string]any{
		"clientID":             "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
		"groupsClaim":          "groups",
		"issuerURL":            "https://some.others.tokens.com",
		"supportedSigningAlgs": []any{"RS256"},
		"usernameClaim":        "sub",
		"usernamePrefix":       "someother",
	})
}

func TestOpenIDConnectsMapsEveryField(t *testing.T) {
	t.Parallel()
	rt := &infrav1.Runtime{}
	second := fullOIDC()
	second.JWKS = []byte(`{"keys":[]}`)
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{
		{ClientID: ptr.To("first"), IssuerURL: ptr.To("https://first.example.com")},
		second,
	}

	got := OpenIDConnects(rt, nil)

	if len(got) != 2 {
		t.Fatalf("got %d OpenIDConnects, want 2", len(got))
	}
	expectEqual(t, "first name", got[0].GetName(), "kyma-oidc-0")
	expectDeepEqual(t, "first spec, only what the Runtime sets", got[0].Object["spec"], map[string]any{
		"clientID":  "first",
		"issuerURL": "https://first.example.com",
	})
	expectEqual(t, "second name", got[1].GetName(), "kyma-oidc-1")
	expectDeepEqual(t, "second spec", got[1].Object["spec"], map[string]any{
		"caBundle":             base64.StdEncoding.EncodeToString([]byte(testCA)),
		"clientID":             "client",
		"groupsClaim":          "groups",
		"groupsPrefix":         "oidc:",
		"issuerURL":            "https://issuer.example.com",
		"jwks":                 map[string]any{"keys": base64.StdEncoding.EncodeToString([]byte(`{"keys":[]}`))},
		"requiredClaims":       map[string]any{"aud": "kyma"},
		"supportedSigningAlgs": []any{"RS256", "ES256"},
		"usernameClaim":        "email",
		"usernamePrefix":       "-",
	})
}

func TestOpenIDConnectsWithoutAdditionalProviders(t *testing.T) {
	t.Parallel()
	for name, extra := range map[string]*[]infrav1.OIDCConfig{"nil": nil, "empty": {}} {
		rt := &infrav1.Runtime{}
		rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = fullOIDC()
		rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = extra
		if got := OpenIDConnects(rt, nil); len(got) != 0 {
			t.Errorf("%s additionalOidcConfig: got %d OpenIDConnects, want none (the main provider belongs to the Shoot)", name, len(got))
		}
	}
}

func TestOpenIDConnectsShareNoMemoryWithTheRuntime(t *testing.T) {
	t.Parallel()
	rt := &infrav1.Runtime{}
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{fullOIDC()}
	spec := OpenIDConnects(rt, nil)[0].Object["spec"].(map[string]any)

	spec["requiredClaims"].(map[string]any)["aud"] = "changed"
	spec["supportedSigningAlgs"].([]any)[0] = "changed"

	want := fullOIDC()
	if got := (*rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig)[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("the Runtime changed with the OpenIDConnect: %+v, want %+v", got, want)
	}
}
