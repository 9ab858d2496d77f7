package v1

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// minRSABits is the smallest RSA modulus a key set may carry.
const minRSABits = 2048

// ValidateJWKS checks the key sets of the Runtime's OIDC providers with ValidateJWKS and names
// the field of each one that is wrong. Admission checks only that a key set looks like a JSON
// object with keys, as CEL cannot parse JSON; whatever renders a key set calls this first and
// treats an error as the user's (retry.Terminal).
func (r *Runtime) ValidateJWKS() field.ErrorList {
	var errs field.ErrorList
	api := field.NewPath("spec", "shoot", "kubernetes", "kubeAPIServer")
	check := func(path *field.Path, c OIDCConfig) {
		if len(c.JWKS) == 0 {
			return
		}
		if err := ValidateJWKS(c.JWKS); err != nil {
			errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: path.Child("jwks").String(),
				BadValue: field.OmitValueType{}, Detail: err.Error()})
		}
	}
	check(api.Child("oidcConfig"), r.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig)
	if extra := r.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig; extra != nil {
		for i, c := range *extra {
			check(api.Child("additionalOidcConfig").Index(i), c)
		}
	}
	return errs
}

// jwkSet is a JSON Web Key Set (RFC 7517, section 5).
type jwkSet struct {
	Keys *[]json.RawMessage `json:"keys"`
}

// jwk holds the members of a JSON Web Key that ValidateJWKS reads.
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// privateMembers are the members of a private or symmetric key (RFC 7518, section 6).
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// ValidateJWKS checks that data is a JSON Web Key Set of public signing keys an API server can
// verify tokens with: a JSON object whose keys array holds RSA keys of at least 2048 bits, EC
// keys on P-256, P-384 or P-521, or Ed25519 keys, each with its members in unpadded base64url.
// A private or symmetric key is refused: it would hand the power to sign tokens to whoever reads
// the cluster's authentication configuration. An empty keys array is a key set.
func ValidateJWKS(data []byte) error {
	var set jwkSet
	if err := json.Unmarshal(data, &set); err != nil {
		return fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	if set.Keys == nil {
		return errors.New("not a JSON Web Key Set: it has no keys array")
	}
	for i, raw := range *set.Keys {
		if err := validateJWK(raw); err != nil {
			return fmt.Errorf("keys[%d]: %w", i, err)
		}
	}
	return nil
}

// validateJWK checks one key of a set.
func validateJWK(raw json.RawMessage) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return errors.New("a key must be a JSON object")
	}
	for _, m := range privateMembers {
		if _, ok := members[m]; ok {
			return fmt.Errorf("a private or symmetric key (member %q): give public keys only", m)
		}
	}
	var k jwk
	if err := json.Unmarshal(raw, &k); err != nil {
		return fmt.Errorf("a key's members: %w", err)
	}
	if k.Use != "" && k.Use != "sig" {
		return fmt.Errorf("use %q: the keys verify signatures (sig)", k.Use)
	}
	switch k.Kty {
	case "RSA":
		return validateRSA(k)
	case "EC":
		return validateEC(k)
	case "OKP":
		return validateOKP(k)
	default:
		return fmt.Errorf("kty %q: want RSA, EC or OKP", k.Kty)
	}
}

// validateRSA checks an RSA public key's modulus and exponent.
func validateRSA(k jwk) error {
	n, err := decodeMember("n", k.N)
	if err != nil {
		return err
	}
	e, err := decodeMember("e", k.E)
	if err != nil {
		return err
	}
	if bits := new(big.Int).SetBytes(n).BitLen(); bits < minRSABits {
		return fmt.Errorf("an RSA modulus of %d bits: at least %d are needed", bits, minRSABits)
	}
	if exp := new(big.Int).SetBytes(e); exp.Cmp(big.NewInt(3)) < 0 || exp.Bit(0) == 0 || exp.BitLen() > 31 {
		return errors.New("an RSA exponent that is not an odd number from 3 to 2^31-1")
	}
	return nil
}

// curves are the elliptic curves of EC signing keys (ES256, ES384, ES512).
var curves = map[string]ecdh.Curve{"P-256": ecdh.P256(), "P-384": ecdh.P384(), "P-521": ecdh.P521()}

// validateEC checks that an EC public key is a point on its curve.
func validateEC(k jwk) error {
	curve, ok := curves[k.Crv]
	if !ok {
		return fmt.Errorf("crv %q: want P-256, P-384 or P-521", k.Crv)
	}
	x, err := decodeMember("x", k.X)
	if err != nil {
		return err
	}
	y, err := decodeMember("y", k.Y)
	if err != nil {
		return err
	}
	point := append(append([]byte{4}, x...), y...)
	if _, err := curve.NewPublicKey(point); err != nil {
		return fmt.Errorf("x and y are not a point on %s", k.Crv)
	}
	return nil
}

// ed25519KeySize is the length of an Ed25519 public key.
const ed25519KeySize = 32

// validateOKP checks an Ed25519 public key.
func validateOKP(k jwk) error {
	if k.Crv != "Ed25519" {
		return fmt.Errorf("crv %q: want Ed25519", k.Crv)
	}
	x, err := decodeMember("x", k.X)
	if err != nil {
		return err
	}
	if len(x) != ed25519KeySize {
		return fmt.Errorf("an Ed25519 key of %d bytes: want %d", len(x), ed25519KeySize)
	}
	return nil
}

// decodeMember decodes a key member in unpadded base64url, refusing an empty one.
func decodeMember(name, v string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("member %s is not unpadded base64url: %w", name, err)
	}
	if len(bytes.TrimLeft(b, "\x00")) == 0 {
		return nil, fmt.Errorf("member %s is missing or zero", name)
	}
	return b, nil
}
