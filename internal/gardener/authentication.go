package gardener

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	"k8s.io/utils/lru"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// AuthenticationConfigKey is the key of the structured authentication ConfigMap that holds the
// AuthenticationConfiguration, the key Gardener reads.
const AuthenticationConfigKey = "config.yaml"

// Claims and prefixes of the legacy --oidc-* flags of kube-apiserver, which the Runtime API's
// OIDC fields mirror.
const (
	// defaultUsernameClaim is --oidc-username-claim's default.
	defaultUsernameClaim = "sub"
	// emailClaim is the one claim the legacy flags did not prefix by default.
	emailClaim = "email"
	// noPrefix is the legacy flags' way to ask for no prefix at all.
	noPrefix = "-"
)

// AuthenticationConfigName names the structured authentication ConfigMap of a shoot in the
// project namespace.
func AuthenticationConfigName(shoot string) string {
	return "structured-auth-config-" + shoot
}

// mainOIDC returns the Runtime's main OIDC provider, or the operators' default when the Runtime
// sets none of its fields; nil when there is neither.
func mainOIDC(rt *infrav1.Runtime, opts RenderOptions) *infrav1.OIDCConfig {
	if in := rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig; !reflect.ValueOf(in).IsZero() {
		return &in
	}
	return opts.DefaultOIDC
}

// AuthenticationConfigMap returns the structured authentication ConfigMap of rt's shoot, as
// Render does, without rendering the Shoot; nil when there is no main OIDC provider. Its errors
// are terminal: a configuration kube-apiserver would not load.
func AuthenticationConfigMap(rt *infrav1.Runtime, opts RenderOptions) (*corev1.ConfigMap, error) {
	cm, err := authenticationConfigMap(rt, opts)
	if err != nil {
		return nil, retry.Terminal(ReasonInvalidRuntime, err)
	}
	return cm, nil
}

// authenticationConfigMap returns the ConfigMap that the Shoot's structured authentication
// references, holding one JWT authenticator for the main OIDC provider; nil when there is no
// main provider. The additional providers are not in it: they are OpenIDConnect resources in
// the runtime cluster (see OpenIDConnects).
func authenticationConfigMap(rt *infrav1.Runtime, opts RenderOptions) (*corev1.ConfigMap, error) {
	oidc := mainOIDC(rt, opts)
	if oidc == nil {
		return nil, nil
	}
	jwt := jwtAuthenticator(*oidc)
	if err := refuseSystemPrefixes(jwt); err != nil {
		return nil, fmt.Errorf("OIDC provider %s of runtime %s (spec.shoot.kubernetes.kubeAPIServer.oidcConfig or the default): %w",
			deref(oidc.IssuerURL), rt.Name, err)
	}
	data, err := encodeAuthenticationConfig(authenticationConfiguration(jwt))
	if err != nil {
		return nil, fmt.Errorf("OIDC provider %s of runtime %s (spec.shoot.kubernetes.kubeAPIServer.oidcConfig or the default): %w",
			deref(oidc.IssuerURL), rt.Name, err)
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        AuthenticationConfigName(rt.Spec.Shoot.Name),
			Namespace:   opts.Namespace,
			Annotations: map[string]string{AnnotationOIDCInput: oidcFingerprint(oidc)},
		},
		Data: map[string]string{AuthenticationConfigKey: string(data)},
	}, nil
}

// authenticationConfiguration wraps JWT authenticators into the configuration kube-apiserver
// reads.
func authenticationConfiguration(jwt ...apiserverv1beta1.JWTAuthenticator) apiserverv1beta1.AuthenticationConfiguration {
	return apiserverv1beta1.AuthenticationConfiguration{
		TypeMeta: metav1.TypeMeta{
			APIVersion: apiserverv1beta1.ConfigSchemeGroupVersion.String(),
			Kind:       "AuthenticationConfiguration",
		},
		JWT: jwt,
	}
}

// systemPrefix is the prefix of the names Kubernetes reserves for its own users and groups.
const systemPrefix = "system:"

// ErrSystemPrefix means an OIDC provider would map its users or groups into Kubernetes'
// reserved system: names.
var ErrSystemPrefix = errors.New("the system: prefix is reserved for Kubernetes' own users and groups")

// systemUserRules are Kubernetes' user validation rules that refuse the reserved system:
// usernames and groups, whatever the provider's tokens claim.
var systemUserRules = []apiserverv1beta1.UserValidationRule{
	{Expression: "!user.username.startsWith('system:')", Message: "username cannot use reserved system: prefix"},
	{Expression: "user.groups.all(group, !group.startsWith('system:'))", Message: "groups cannot use reserved system: prefix"},
}

// refuseSystemPrefixes refuses a username or groups prefix in the reserved system: names.
func refuseSystemPrefixes(jwt apiserverv1beta1.JWTAuthenticator) error {
	m := jwt.ClaimMappings
	if p := deref(m.Username.Prefix); strings.HasPrefix(p, systemPrefix) {
		return fmt.Errorf("usernamePrefix %q: %w", p, ErrSystemPrefix)
	}
	if p := deref(m.Groups.Prefix); strings.HasPrefix(p, systemPrefix) {
		return fmt.Errorf("groupsPrefix %q: %w", p, ErrSystemPrefix)
	}
	return nil
}

// encodedConfigs holds the YAML of authentication configurations already encoded and validated,
// by their JSON. A fleet shares a handful of OIDC providers, and a re-check renders its
// runtime's configuration three times (ApplyAuthentication, and ApplyShoot's two renders); YAML
// encoding and validation were a tenth of a re-check's CPU.
var encodedConfigs = lru.New(256)

// encodeAuthenticationConfig returns cfg as the YAML Gardener reads, once it checked that
// kube-apiserver would load it: Gardener refuses a ConfigMap that kube-apiserver would not load,
// and this says so before a round trip.
func encodeAuthenticationConfig(cfg apiserverv1beta1.AuthenticationConfiguration) ([]byte, error) {
	key, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode authentication configuration: %w", err)
	}
	if v, ok := encodedConfigs.Get(string(key)); ok {
		if data, ok := v.([]byte); ok {
			return slices.Clone(data), nil
		}
	}
	data, err := yaml.JSONToYAML(key)
	if err != nil {
		return nil, fmt.Errorf("encode authentication configuration: %w", err)
	}
	if err := ValidateAuthenticationConfig(data); err != nil {
		return nil, err
	}
	encodedConfigs.Add(string(key), slices.Clone(data))
	return data, nil
}

// jwtAuthenticator turns one OIDC provider, given as the legacy flags describe it, into the JWT
// authenticator kube-apiserver would have built from those flags. Structured authentication
// wants every prefix written out, so the defaults the flags implied are made explicit here:
// the username claim is sub unless named; its prefix is the issuer URL followed by '#' unless
// the claim is email; "-" means no prefix; groups get no prefix unless named. Signing
// algorithms have no counterpart: kube-apiserver accepts the asymmetric JOSE algorithms, which
// the Runtime API already limits signingAlgs to.
func jwtAuthenticator(in infrav1.OIDCConfig) apiserverv1beta1.JWTAuthenticator {
	issuer := deref(in.IssuerURL)
	out := apiserverv1beta1.JWTAuthenticator{
		Issuer: apiserverv1beta1.Issuer{
			URL:                  issuer,
			CertificateAuthority: deref(in.CABundle),
			Audiences:            []string{deref(in.ClientID)},
		},
	}
	claim := deref(in.UsernameClaim)
	if claim == "" {
		claim = defaultUsernameClaim
	}
	out.ClaimMappings.Username = apiserverv1beta1.PrefixedClaimOrExpression{
		Claim:  claim,
		Prefix: usernamePrefix(in.UsernamePrefix, claim, issuer),
	}
	if groups := deref(in.GroupsClaim); groups != "" {
		out.ClaimMappings.Groups = apiserverv1beta1.PrefixedClaimOrExpression{
			Claim:  groups,
			Prefix: explicitPrefix(in.GroupsPrefix),
		}
	}
	for _, name := range slices.Sorted(maps.Keys(in.RequiredClaims)) {
		out.ClaimValidationRules = append(out.ClaimValidationRules, apiserverv1beta1.ClaimValidationRule{
			Claim:         name,
			RequiredValue: in.RequiredClaims[name],
		})
	}
	out.UserValidationRules = slices.Clone(systemUserRules)
	return out
}

// usernamePrefix is the prefix --oidc-username-prefix would have applied: the given one ("-"
// for none), or by default none for email and "<issuer>#" for any other claim.
func usernamePrefix(given *string, claim, issuer string) *string {
	if given != nil {
		return explicitPrefix(given)
	}
	if claim == emailClaim {
		return new(string)
	}
	p := issuer + "#"
	return &p
}

// explicitPrefix returns the given prefix, with "-" and unset meaning none: always non-nil, as
// structured authentication requires a prefix wherever a claim is mapped.
func explicitPrefix(given *string) *string {
	if given == nil || *given == noPrefix {
		return new(string)
	}
	p := *given
	return &p
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
