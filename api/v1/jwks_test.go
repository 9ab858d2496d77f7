package v1_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// b64 encodes a key member as a JWK carries it.
func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// keySet marshals keys as a JSON Web Key Set.
func keySet(t *testing.T, keys ...map[string]any) []byte {
	t.Helper()
	if keys == nil {
		keys = []map[string]any{}
	}
	data, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// with returns a copy of key with the members of change; a nil value removes a member.
func with(key map[string]any, change map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range key {
		out[k] = v
	}
	for k, v := range change {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

func TestValidateJWKS(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edKey, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPoint, err := ecKey.PublicKey.Bytes() // 0x04 || x || y
	if err != nil {
		t.Fatal(err)
	}
	rsaPub := map[string]any{"kty": "RSA", "use": "sig", "kid": "r1", "n": b64(rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(rsaKey.E)).Bytes())}
	ecPub := map[string]any{"kty": "EC", "crv": "P-256", "x": b64(ecPoint[1:33]), "y": b64(ecPoint[33:])}
	edPub := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(edKey)}
	otherY := b64(append([]byte{}, ecPoint[1:33]...)) // x again: not on the curve

	cases := []struct {
		name string // what the key set is
		data []byte // the key set
		says string // a fragment of the error; empty when the set is valid
	}{
		{"empty key set, as upstream's fixtures have", []byte(`{"keys":[]}`), ""},
		{"RSA, EC and Ed25519 public keys", keySet(t, rsaPub, ecPub, edPub), ""},
		{"not JSON", []byte("garbage"), "not a JSON Web Key Set"},
		{"a JSON array", []byte(`[]`), "not a JSON Web Key Set"},
		{"an object without keys", []byte(`{"kids":[]}`), "no keys array"},
		{"keys not an array", []byte(`{"keys":5}`), "not a JSON Web Key Set"},
		{"a key that is no object", []byte(`{"keys":["k"]}`), "keys[0]: a key must be a JSON object"},
		{"an unknown key type", keySet(t, with(rsaPub, map[string]any{"kty": "DSA"})), `kty "DSA"`},
		{"a symmetric key", keySet(t, map[string]any{"kty": "oct", "k": b64([]byte("secret"))}), `member "k"`},
		{"an RSA private key", keySet(t, rsaPub, with(rsaPub, map[string]any{"d": b64(rsaKey.D.Bytes())})), `keys[1]: a private or symmetric key (member "d")`},
		{"an encryption key", keySet(t, with(rsaPub, map[string]any{"use": "enc"})), `use "enc"`},
		{"an RSA key without modulus", keySet(t, with(rsaPub, map[string]any{"n": nil})), "member n is missing"},
		{"an RSA modulus in padded base64", keySet(t, with(rsaPub, map[string]any{"n": base64.URLEncoding.EncodeToString(rsaKey.N.Bytes())})), "member n is not unpadded base64url"},
		{"a short RSA modulus", keySet(t, with(rsaPub, map[string]any{"n": b64(rsaKey.N.Bytes()[:128])})), "an RSA modulus of"},
		{"an even RSA exponent", keySet(t, with(rsaPub, map[string]any{"e": b64([]byte{2})})), "RSA exponent"},
		{"an EC key on an unknown curve", keySet(t, with(ecPub, map[string]any{"crv": "P-192"})), `crv "P-192"`},
		{"an EC point off the curve", keySet(t, with(ecPub, map[string]any{"y": otherY})), "not a point on P-256"},
		{"a short Ed25519 key", keySet(t, with(edPub, map[string]any{"x": b64(edKey[:16])})), "an Ed25519 key of 16 bytes"},
		{"an OKP key that is not Ed25519", keySet(t, with(edPub, map[string]any{"crv": "X25519"})), `crv "X25519"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := infrav1.ValidateJWKS(tc.data)
			switch {
			case tc.says == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.says != "" && err == nil:
				t.Error("accepted, want refused")
			case tc.says != "" && !strings.Contains(err.Error(), tc.says):
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

// TestRuntimeValidateJWKSNamesTheField: the error of a Runtime's key set names the provider's
// field, so the status tells the user what to change.
func TestRuntimeValidateJWKSNamesTheField(t *testing.T) {
	rt := &infrav1.Runtime{}
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{
		{ClientID: ptr.To("a"), JWKS: []byte(`{"keys":[]}`)},
		{ClientID: ptr.To("b"), JWKS: []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)},
	}
	errs := rt.ValidateJWKS()
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	want := "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[1].jwks"
	if got := errs.ToAggregate().Error(); !strings.Contains(got, want) || strings.Contains(got, "c2VjcmV0") {
		t.Errorf("error %q does not name %s, or repeats the key set", got, want)
	}
}
