package integration_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// openIDConnect returns an OpenIDConnect object of the given name, for Get and Create.
func openIDConnect(name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gardener.OpenIDConnectGVK)
	o.SetName(name)
	return o
}

// managedOpenIDConnects lists the OpenIDConnects of the runtime cluster that the controller manages.
func managedOpenIDConnects(t *testing.T, c client.Client) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gardener.OpenIDConnectGVK.GroupVersion().WithKind("OpenIDConnectList"))
	if err := c.List(t.Context(), list, client.MatchingLabels{runtimectrl.LabelManagedBy: runtimectrl.FieldOwner}); err != nil {
		t.Fatalf("list OpenIDConnects: %v", err)
	}
	return list.Items
}

// openIDConnectIssuers maps the managed OpenIDConnects of the runtime cluster to their issuers.
func openIDConnectIssuers(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	issuers := map[string]string{}
	for _, o := range managedOpenIDConnects(t, c) {
		issuers[o.GetName()], _, _ = unstructured.NestedString(o.Object, "spec", "issuerURL")
	}
	return issuers
}

// TestAPIServerAccessFollowsTheSpec changes the additional OIDC providers and the ACL of a Ready
// runtime: the OpenIDConnects in the runtime cluster and the shoot's acl extension follow, an
// OpenIDConnect the controller does not manage is left alone, and removing the providers and the
// ACL removes what the controller made for them.
func TestAPIServerAccessFollowsTheSpec(t *testing.T) {
	rt := newRuntime(t, "access-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	rc := runtimeClient(t, rt)
	if got, want := openIDConnectIssuers(t, rc), map[string]string{"kyma-oidc-0": "https://some.others.tokens.com"}; !maps.Equal(got, want) {
		t.Fatalf("OpenIDConnects from the fixture: got %v, want %v", got, want)
	}
	foreign := openIDConnect("made-by-someone-else")
	foreign.Object["spec"] = map[string]any{"issuerURL": "https://foreign.example.com", "clientID": "foreign"}
	if err := rc.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}

	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{
		{ClientID: ptr.To("first"), IssuerURL: ptr.To("https://first.example.com"), UsernamePrefix: ptr.To("first:")},
		{ClientID: ptr.To("second"), IssuerURL: ptr.To("https://second.example.com"), RequiredClaims: map[string]string{"aud": "kyma"}},
	}
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.0.0.0/8"}}
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after adding providers and an ACL", readyAt(rt.Generation))
	if got, want := openIDConnectIssuers(t, rc), map[string]string{
		"kyma-oidc-0": "https://first.example.com",
		"kyma-oidc-1": "https://second.example.com",
	}; !maps.Equal(got, want) {
		t.Errorf("OpenIDConnects after the change: got %v, want %v", got, want)
	}
	assertOpenIDConnects(t, rc, rt)
	second := openIDConnect("kyma-oidc-1")
	if err := rc.Get(t.Context(), client.ObjectKeyFromObject(second), second); err != nil {
		t.Fatal(err)
	}
	if claims, _, _ := unstructured.NestedStringMap(second.Object, "spec", "requiredClaims"); claims["aud"] != "kyma" {
		t.Errorf("kyma-oidc-1 requiredClaims: got %v, want aud=kyma", claims)
	}
	acl := shootExtension(t, rt, gardener.ExtensionACL)
	if acl == nil || acl.ProviderConfig == nil {
		t.Fatalf("shoot acl extension: got %+v, want one with a providerConfig", acl)
	}
	var rule struct {
		Rule struct {
			Action string   `json:"action"`
			Type   string   `json:"type"`
			CIDRs  []string `json:"cidrs"`
		} `json:"rule"`
	}
	if err := json.Unmarshal(acl.ProviderConfig.Raw, &rule); err != nil {
		t.Fatalf("decode acl providerConfig %s: %v", acl.ProviderConfig.Raw, err)
	}
	wantCIDRs := []string{"10.0.0.0/8", "198.51.100.0/29", "203.0.113.16/28", controlPlaneIP}
	if r := rule.Rule; r.Action != "ALLOW" || r.Type != "remote_ip" || !slices.Equal(r.CIDRs, wantCIDRs) {
		t.Errorf("shoot acl rule: got %+v, want ALLOW remote_ip %v (the runtime's, the operators' and the control plane's)", r, wantCIDRs)
	}

	// An empty list, not nil: a Runtime that leaves the providers unset gets the shared tenant.
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{}
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = nil
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after removing them", readyAt(rt.Generation))
	if got := openIDConnectIssuers(t, rc); len(got) != 0 {
		t.Errorf("managed OpenIDConnects after removing the providers: got %v, want none", got)
	}
	if err := rc.Get(t.Context(), client.ObjectKeyFromObject(foreign), openIDConnect(foreign.GetName())); err != nil {
		t.Errorf("the OpenIDConnect the controller does not manage is gone: %v", err)
	}
	if acl := shootExtension(t, rt, gardener.ExtensionACL); acl == nil || !ptr.Deref(acl.Disabled, false) || acl.ProviderConfig != nil {
		t.Errorf("shoot acl extension after removing the ACL: got %+v, want it disabled", acl)
	}
}

// shootExtension returns the runtime's shoot's extension of the given type, or nil.
func shootExtension(t *testing.T, rt *infrav1.Runtime, typ string) *gardencorev1beta1.Extension {
	t.Helper()
	shoot := getShoot(t, rt.Spec.Shoot.Name)
	i := slices.IndexFunc(shoot.Spec.Extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == typ })
	if i < 0 {
		return nil
	}
	return &shoot.Spec.Extensions[i]
}
