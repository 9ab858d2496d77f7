package gardener

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// upstreamAuth is a structured authentication ConfigMap as upstream writes it for the issuer of
// baseRuntime: no username prefix where this manager would write "<issuer>#".
const upstreamAuth = `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://issuer.example.com
    audiences: [client]
  claimMappings:
    username:
      claim: sub
      prefix: ""
`

// TestKeepLivePrefixes keeps the live ConfigMap's prefixes until the Runtime's OIDC settings
// change, and never keeps a system: prefix.
func TestKeepLivePrefixes(t *testing.T) {
	tests := []struct {
		name string
		// live returns the live ConfigMap, given the one the Runtime asks for.
		live func(want *corev1.ConfigMap) *corev1.ConfigMap
		// wantPrefix is the username prefix of the result.
		wantPrefix string
	}{
		{
			name:       "upstream's ConfigMap keeps its prefix",
			live:       func(*corev1.ConfigMap) *corev1.ConfigMap { return liveAuth(upstreamAuth, "") },
			wantPrefix: `prefix: ""`,
		},
		{
			name: "a ConfigMap written for the same OIDC settings keeps its prefix",
			live: func(want *corev1.ConfigMap) *corev1.ConfigMap {
				return liveAuth(upstreamAuth, want.Annotations[AnnotationOIDCInput])
			},
			wantPrefix: `prefix: ""`,
		},
		{
			name:       "changed OIDC settings take the Runtime's prefix",
			live:       func(*corev1.ConfigMap) *corev1.ConfigMap { return liveAuth(upstreamAuth, "written-for-other-settings") },
			wantPrefix: "prefix: https://issuer.example.com#",
		},
		{
			name: "a live system: prefix is not kept",
			live: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return liveAuth(strings.Replace(upstreamAuth, `prefix: ""`, `prefix: "system:"`, 1), "")
			},
			wantPrefix: "prefix: https://issuer.example.com#",
		},
		{
			name: "a prefix mapped from another claim is not kept",
			live: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return liveAuth(strings.Replace(upstreamAuth, "claim: sub", "claim: email", 1), "")
			},
			wantPrefix: "prefix: https://issuer.example.com#",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := baseRuntime()
			want, err := AuthenticationConfigMap(rt, RenderOptions{Namespace: "garden-kyma"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := KeepLivePrefixes(want, tt.live(want))
			if err != nil {
				t.Fatal(err)
			}
			if data := got.Data[AuthenticationConfigKey]; !strings.Contains(data, tt.wantPrefix) || !strings.Contains(data, "userValidationRules") {
				t.Errorf("config.yaml =\n%s\nwant %s and the system: rules", data, tt.wantPrefix)
			}
			if got.Annotations[AnnotationOIDCInput] != want.Annotations[AnnotationOIDCInput] {
				t.Error("the result is not marked with the Runtime's OIDC settings")
			}
		})
	}
	rt := baseRuntime()
	before, _ := AuthenticationConfigMap(rt, RenderOptions{Namespace: "garden-kyma"})
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.UsernameClaim = ptr.To("email")
	after, _ := AuthenticationConfigMap(rt, RenderOptions{Namespace: "garden-kyma"})
	if before.Annotations[AnnotationOIDCInput] == after.Annotations[AnnotationOIDCInput] {
		t.Error("a change of the OIDC settings keeps the fingerprint")
	}
}

// liveAuth is a live structured authentication ConfigMap with the fingerprint annotation, if
// any.
func liveAuth(config, fingerprint string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{Data: map[string]string{AuthenticationConfigKey: config}}
	if fingerprint != "" {
		cm.Annotations = map[string]string{AnnotationOIDCInput: fingerprint}
	}
	return cm
}

// upstreamWritten is the config.yaml upstream's manager writes for a provider with issuer
// https://issuer.example.com, client "client", username claim sub with prefix "-", groups claim
// groups and no groups prefix: its own structs encoded by sigs.k8s.io/yaml, keys sorted, the
// groups prefix defaulted to "".
const upstreamWritten = `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: groups
      prefix: ""
    username:
      claim: sub
      prefix: '-'
  issuer:
    audiences:
    - client
    url: https://issuer.example.com
kind: AuthenticationConfiguration
`

// TestWrittenByUpstream recognises upstream's ConfigMap for the Runtime's current OIDC settings,
// so a takeover leaves it unwritten, and nothing else.
func TestWrittenByUpstream(t *testing.T) {
	runtime := func() *infrav1.Runtime {
		rt := baseRuntime()
		oidc := &rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig
		oidc.UsernameClaim, oidc.UsernamePrefix, oidc.GroupsClaim = ptr.To("sub"), ptr.To("-"), ptr.To("groups")
		return rt
	}
	tests := []struct {
		name string
		// change changes the Runtime; live is the live ConfigMap's config.yaml, fingerprint
		// its AnnotationOIDCInput ("" for none).
		change      func(*infrav1.Runtime)
		live        string
		fingerprint string
		want        bool
	}{
		{name: "upstream's ConfigMap for the Runtime's settings", live: upstreamWritten, want: true},
		{name: "the same content in another layout", live: upstreamAuthOtherLayout, want: true},
		{
			name: "upstream's ConfigMap for settings the Runtime changed since",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.UsernamePrefix = ptr.To("oidc:")
			},
			live: upstreamWritten,
		},
		{name: "a ConfigMap this manager wrote", live: upstreamWritten, fingerprint: "abc"},
		{name: "a ConfigMap that does not decode", live: "jwt: [", want: false},
		{
			name: "upstream's ConfigMap for the landscape's default, the Runtime naming no provider",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = infrav1.OIDCConfig{}
			},
			live: strings.Replace(upstreamWritten, "https://issuer.example.com", "https://default.example.com", 1),
			want: true,
		},
	}
	opts := RenderOptions{DefaultOIDC: &infrav1.OIDCConfig{
		IssuerURL: ptr.To("https://default.example.com"), ClientID: ptr.To("client"),
		UsernameClaim: ptr.To("sub"), UsernamePrefix: ptr.To("-"), GroupsClaim: ptr.To("groups"),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := runtime()
			if tt.change != nil {
				tt.change(rt)
			}
			if got := WrittenByUpstream(rt, opts, liveAuth(tt.live, tt.fingerprint)); got != tt.want {
				t.Errorf("WrittenByUpstream = %v, want %v", got, tt.want)
			}
		})
	}
}

// upstreamAuthOtherLayout is upstreamWritten with its keys in another order and flow style.
const upstreamAuthOtherLayout = `kind: AuthenticationConfiguration
apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- issuer: {url: "https://issuer.example.com", audiences: [client]}
  claimMappings:
    username: {prefix: "-", claim: sub}
    groups: {prefix: "", claim: groups}
`
