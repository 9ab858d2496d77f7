package gardener

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// AnnotationOIDCInput carries, on the structured authentication ConfigMap the manager writes,
// the fingerprint of the main OIDC provider it was written for (the Runtime's or the
// landscape's default, as the Runtime API describes it). It is how the manager tells whether
// the Runtime's OIDC settings changed since the ConfigMap was written.
const AnnotationOIDCInput = "infrastructuremanager.kyma-project.io/oidc-input"

// oidcFingerprint is a short hash of the OIDC provider's settings.
func oidcFingerprint(in *infrav1.OIDCConfig) string {
	data, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("encode OIDC settings: %v", err)) // Strings, slices and maps of strings always encode.
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// KeepLivePrefixes returns want, the structured authentication ConfigMap the Runtime asks for,
// with the username and groups prefixes the live ConfigMap's authenticator of the same issuer
// has, as long as the Runtime's OIDC settings did not change since the live one was written: a
// changed prefix renames every user of the provider, and upstream derives prefixes differently.
// "Changed since" is read from AnnotationOIDCInput: a live ConfigMap without it was written by
// upstream (or by an older manager) and is taken over with its prefixes; one with it keeps its
// prefixes while the fingerprint is the Runtime's current one, and takes the Runtime's once the
// Runtime's OIDC settings differ. A live system: prefix is never kept. want is not changed;
// the result is a copy, or want itself when there is nothing to keep.
func KeepLivePrefixes(want, live *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	if want == nil || live == nil {
		return want, nil
	}
	if fp, ok := live.Annotations[AnnotationOIDCInput]; ok && fp != want.Annotations[AnnotationOIDCInput] {
		return want, nil
	}
	liveCfg, err := decodeAuthentication(live.Data[AuthenticationConfigKey])
	if err != nil {
		return want, nil //nolint:nilerr // A live ConfigMap that does not decode has no prefixes to keep; the Runtime's replace it.
	}
	cfg, err := decodeAuthentication(want.Data[AuthenticationConfigKey])
	if err != nil {
		return nil, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("structured authentication %s: %w", want.Name, err))
	}
	if !keepPrefixes(cfg.JWT, liveCfg.JWT) {
		return want, nil
	}
	data, err := encodeAuthenticationConfig(*cfg)
	if err != nil {
		return nil, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("structured authentication %s with the live prefixes: %w", want.Name, err))
	}
	out := want.DeepCopy()
	out.Data[AuthenticationConfigKey] = string(data)
	return out, nil
}

// keepPrefixes copies into jwt the prefixes of the live authenticator of the same issuer, and
// reports whether any changed.
func keepPrefixes(jwt, live []apiserverv1beta1.JWTAuthenticator) bool {
	changed := false
	for i := range jwt {
		l := liveAuthenticator(live, jwt[i].Issuer.URL)
		if l == nil {
			continue
		}
		changed = keepPrefix(&jwt[i].ClaimMappings.Username, l.ClaimMappings.Username) || changed
		changed = keepPrefix(&jwt[i].ClaimMappings.Groups, l.ClaimMappings.Groups) || changed
	}
	return changed
}

// keepPrefix takes the live prefix of a claim mapped from the same claim, unless it is a
// system: prefix; it reports whether the prefix changed.
func keepPrefix(m *apiserverv1beta1.PrefixedClaimOrExpression, live apiserverv1beta1.PrefixedClaimOrExpression) bool {
	if m.Claim == "" || m.Claim != live.Claim || live.Prefix == nil || strings.HasPrefix(*live.Prefix, systemPrefix) {
		return false
	}
	if m.Prefix != nil && *m.Prefix == *live.Prefix {
		return false
	}
	p := *live.Prefix
	m.Prefix = &p
	return true
}

// liveAuthenticator returns the live authenticator of the issuer, or nil.
func liveAuthenticator(live []apiserverv1beta1.JWTAuthenticator, issuer string) *apiserverv1beta1.JWTAuthenticator {
	for i := range live {
		if live[i].Issuer.URL == issuer {
			return &live[i]
		}
	}
	return nil
}

// decodeAuthentication reads the config.yaml of a structured authentication ConfigMap.
func decodeAuthentication(data string) (*apiserverv1beta1.AuthenticationConfiguration, error) {
	cfg := &apiserverv1beta1.AuthenticationConfiguration{}
	if err := yaml.Unmarshal([]byte(data), cfg); err != nil {
		return nil, fmt.Errorf("decode authentication configuration: %w", err)
	}
	return cfg, nil
}

// WrittenByUpstream reports whether live, a structured authentication ConfigMap that carries no
// AnnotationOIDCInput, holds what upstream's manager writes for rt: one JWT authenticator for the
// Runtime's OIDC provider (the landscape's default when the Runtime names no issuer or client),
// with the client as the one audience, the username claim and prefix as given, and the groups
// claim with the groups prefix as given or "" (upstream's structuredauth package). Such a
// ConfigMap already says what the Runtime asks for, in upstream's words: a takeover leaves it
// as it is, and the manager writes its own only once the Runtime's OIDC settings change. The
// content is compared decoded, so the YAML's layout does not count.
func WrittenByUpstream(rt *infrav1.Runtime, opts RenderOptions, live *corev1.ConfigMap) bool {
	if live == nil {
		return false
	}
	if _, ours := live.Annotations[AnnotationOIDCInput]; ours {
		return false
	}
	oidc := rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig
	if oidc.IssuerURL == nil || oidc.ClientID == nil {
		if opts.DefaultOIDC == nil {
			return false
		}
		oidc = *opts.DefaultOIDC
	}
	want, err := json.Marshal(upstreamAuthentication(oidc))
	if err != nil {
		return false
	}
	got, err := yaml.YAMLToJSON([]byte(live.Data[AuthenticationConfigKey]))
	if err != nil {
		return false
	}
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return false
	}
	return reflect.DeepEqual(w, g)
}

// upstreamAuthentication is the AuthenticationConfiguration upstream's manager writes for its
// OIDC provider, in upstream's own shape.
func upstreamAuthentication(oidc infrav1.OIDCConfig) any {
	type claim struct {
		Claim  string  `json:"claim"`
		Prefix *string `json:"prefix,omitempty"`
	}
	groupsPrefix := ""
	if oidc.GroupsPrefix != nil {
		groupsPrefix = *oidc.GroupsPrefix
	}
	jwt := map[string]any{
		"issuer": map[string]any{"url": deref(oidc.IssuerURL), "audiences": []string{deref(oidc.ClientID)}},
		"claimMappings": map[string]any{
			"username": claim{Claim: deref(oidc.UsernameClaim), Prefix: oidc.UsernamePrefix},
			"groups":   claim{Claim: deref(oidc.GroupsClaim), Prefix: &groupsPrefix},
		},
	}
	return map[string]any{
		"apiVersion": apiserverv1beta1.ConfigSchemeGroupVersion.String(),
		"kind":       "AuthenticationConfiguration",
		"jwt":        []any{jwt},
	}
}
