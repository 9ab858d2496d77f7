package gardener

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
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
			want, err := AuthenticationConfigMap(rt, ConvertOptions{Namespace: "garden-kyma"})
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
	before, _ := AuthenticationConfigMap(rt, ConvertOptions{Namespace: "garden-kyma"})
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.UsernameClaim = ptr.To("email")
	after, _ := AuthenticationConfigMap(rt, ConvertOptions{Namespace: "garden-kyma"})
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
