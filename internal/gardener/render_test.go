package gardener

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener/provider"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

var update = flag.Bool("update", false, "rewrite the golden renders in testdata/render")

// goldenOptions are the landscape defaults of the golden renders.
var goldenOptions = RenderOptions{
	Namespace:                  "garden-kyma",
	DefaultKubernetesVersion:   "1.33.4",
	DefaultMachineImage:        "gardenlinux",
	DefaultMachineImageVersion: "1592.1.0",
}

// TestRenderGolden renders every upstream example Runtime and every maximal Runtime as a new
// shoot and compares the objects, as YAML, with testdata/render/<file>. Review a change with
// `go test ./internal/gardener -run TestRenderGolden -update` and git diff.
func TestRenderGolden(t *testing.T) {
	for _, file := range testenv.RuntimeFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			rt := testenv.ReadRuntime(t, file)
			r, err := Render(rt, nil, goldenOptions)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			data, err := r.YAML()
			if err != nil {
				t.Fatal(err)
			}
			got := bytes.NewBuffer(data)
			golden := filepath.Join("testdata", "render", filepath.Base(file))
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden render (run with -update to write it): %v", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("render of %s differs from %s; run with -update and review the diff\n--- got\n%s", file, golden, got.String())
			}
		})
	}
}

// TestRenderAWSSubnetLayout pins the subnet layout existing aws shoots have: a running shoot's
// networks are immutable, so any other layout would break their adoption.
func TestRenderAWSSubnetLayout(t *testing.T) {
	rt := testenv.ReadRuntime(t, filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	r, err := Render(rt, nil, goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Networks struct {
			VPC   struct{ CIDR string } `json:"vpc"`
			Zones []struct {
				Name, Workers, Public, Internal string
			} `json:"zones"`
		} `json:"networks"`
	}
	if err := json.Unmarshal(r.Shoot.Spec.Provider.InfrastructureConfig.Raw, &cfg); err != nil {
		t.Fatal(err)
	}
	want := [][4]string{
		{"eu-central-1a", "10.250.0.0/19", "10.250.32.0/20", "10.250.48.0/20"},
		{"eu-central-1b", "10.250.64.0/19", "10.250.96.0/20", "10.250.112.0/20"},
		{"eu-central-1c", "10.250.128.0/19", "10.250.160.0/20", "10.250.176.0/20"},
	}
	expectEqual(t, "vpc.cidr", cfg.Networks.VPC.CIDR, "10.250.0.0/16")
	if len(cfg.Networks.Zones) != len(want) {
		t.Fatalf("got %d zones, want %d", len(cfg.Networks.Zones), len(want))
	}
	for i, z := range cfg.Networks.Zones {
		expectEqual(t, "zone", [4]string{z.Name, z.Workers, z.Public, z.Internal}, want[i])
	}
}

// TestRenderWorkersLoseNothing renders each maximal Runtime and checks that every field of
// every worker pool reaches the Shoot with the same value.
func TestRenderWorkersLoseNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.FixturesDir(), "runtimes", "maximal-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no maximal runtimes: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			rt := testenv.ReadRuntime(t, file)
			r, err := Render(rt, nil, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			in := append(append([]infrav1.Worker{}, rt.Spec.Shoot.Provider.Workers...), *rt.Spec.Shoot.Provider.AdditionalWorkers...)
			out := r.Shoot.Spec.Provider.Workers
			if len(out) != len(in) {
				t.Fatalf("got %d worker pools, want %d", len(out), len(in))
			}
			for i := range in {
				want, got := asJSONMap(t, in[i]), asJSONMap(t, out[i])
				for field, value := range want {
					gotValue, _ := json.Marshal(got[field])
					wantValue, _ := json.Marshal(value)
					if !bytes.Equal(gotValue, wantValue) {
						t.Errorf("worker %s field %s = %s, want %s", in[i].Name, field, gotValue, wantValue)
					}
				}
			}
		})
	}
}

// TestRenderAuthentication checks the structured authentication the main OIDC provider
// becomes: the prefixes the legacy flags implied are written out, and the result passes
// Kubernetes' own validation.
func TestRenderAuthentication(t *testing.T) {
	tests := []struct {
		// name describes the case.
		name string
		// oidc is the Runtime's main provider; nil leaves it empty.
		oidc *infrav1.OIDCConfig
		// defaultOIDC is the landscape's default provider.
		defaultOIDC *infrav1.OIDCConfig
		// want are fragments the config.yaml must hold; none when no ConfigMap is expected.
		want []string
		// wantErr is a fragment of the expected terminal error.
		wantErr string
	}{
		{
			name: "claim sub without prefix gets the issuer prefix the legacy flag implied",
			oidc: &infrav1.OIDCConfig{IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma"), UsernameClaim: ptr.To("sub")},
			want: []string{"claim: sub", "prefix: https://issuer.example.com#", "audiences:\n    - kyma", "url: https://issuer.example.com"},
		},
		{
			name: "no username claim is sub with the issuer prefix",
			oidc: &infrav1.OIDCConfig{IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma")},
			want: []string{"claim: sub", "prefix: https://issuer.example.com#"},
		},
		{
			name: "claim email without prefix gets none",
			oidc: &infrav1.OIDCConfig{IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma"), UsernameClaim: ptr.To("email")},
			want: []string{"claim: email", `prefix: ""`},
		},
		{
			name: "prefix - means none",
			oidc: &infrav1.OIDCConfig{IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma"), UsernamePrefix: ptr.To("-")},
			want: []string{"claim: sub", `prefix: ""`},
		},
		{
			name: "groups and required claims",
			oidc: &infrav1.OIDCConfig{
				IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma"),
				GroupsClaim: ptr.To("groups"), GroupsPrefix: ptr.To("oidc:"), RequiredClaims: map[string]string{"tenant": "a", "aud2": "b"},
			},
			want: []string{"claim: groups\n      prefix: 'oidc:'", "claim: aud2\n    requiredValue: b\n  - claim: tenant\n    requiredValue: a"},
		},
		{
			name:        "no provider uses the landscape default",
			defaultOIDC: &infrav1.OIDCConfig{IssuerURL: ptr.To("https://operators.example.com"), ClientID: ptr.To("ops"), UsernameClaim: ptr.To("email")},
			want:        []string{"url: https://operators.example.com", "- ops"},
		},
		{
			name: "no provider and no default: no structured authentication",
		},
		{
			name:    "a CA bundle that is not PEM is a user error naming the field",
			oidc:    &infrav1.OIDCConfig{IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma"), CABundle: ptr.To("not a certificate")},
			wantErr: "spec.shoot.kubernetes.kubeAPIServer.oidcConfig",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := baseRuntime()
			rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = infrav1.OIDCConfig{}
			if tt.oidc != nil {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = *tt.oidc
			}
			opts := goldenOptions
			opts.DefaultOIDC = tt.defaultOIDC
			r, err := Render(rt, nil, opts)
			// The second render finds the configuration encoded and validated already: it must
			// give the same ConfigMap, or the same error.
			again, errAgain := Render(rt, nil, opts)
			if (err == nil) != (errAgain == nil) || (err == nil && !equality.Semantic.DeepEqual(r.AuthenticationConfig, again.AuthenticationConfig)) {
				t.Errorf("a second render differs: %v, %v; first %v, %v", again.AuthenticationConfig, errAgain, r.AuthenticationConfig, err)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if c := retry.Classify(err); c.Class != retry.ClassTerminal {
					t.Errorf("class = %s, want terminal", c.Class)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.want) == 0 {
				if r.AuthenticationConfig != nil || r.Shoot.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication != nil {
					t.Errorf("got structured authentication %v, want none", r.AuthenticationConfig)
				}
				return
			}
			data := r.AuthenticationConfig.Data[AuthenticationConfigKey]
			if err := ValidateAuthenticationConfig([]byte(data)); err != nil {
				t.Errorf("Kubernetes refuses the configuration: %v\n%s", err, data)
			}
			for _, w := range tt.want {
				if !strings.Contains(data, w) {
					t.Errorf("config.yaml lacks %q:\n%s", w, data)
				}
			}
			expectEqual(t, "ConfigMap namespace", r.AuthenticationConfig.Namespace, "garden-kyma")
			expectEqual(t, "structuredAuthentication.configMapName",
				r.Shoot.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication.ConfigMapName, r.AuthenticationConfig.Name)
		})
	}
}

// TestRenderNeverDowngrades renders a Runtime that asks for older versions than its shoot runs:
// the running versions stay, and Kept says so.
func TestRenderNeverDowngrades(t *testing.T) {
	tests := []struct {
		// name describes the case.
		name string
		// asked are the Kubernetes and image versions the Runtime asks for.
		askedK8s, askedImage string
		// running are the versions the shoot runs.
		runningK8s, runningImage string
		// want are the rendered versions.
		wantK8s, wantImage string
		// wantKept is how many versions were kept higher.
		wantKept int
	}{
		{"same versions", "1.33.4", "1592.1.0", "1.33.4", "1592.1.0", "1.33.4", "1592.1.0", 0},
		{"upgrade both", "1.34.1", "1592.2.0", "1.33.4", "1592.1.0", "1.34.1", "1592.2.0", 0},
		{"older kubernetes is kept higher", "1.32.8", "1592.1.0", "1.33.4", "1592.1.0", "1.33.4", "1592.1.0", 1},
		{"older patch is kept higher", "1.33.1", "1592.1.0", "1.33.4", "1592.1.0", "1.33.4", "1592.1.0", 1},
		{"older image is kept higher", "1.33.4", "1443.9.0", "1.33.4", "1592.1.0", "1.33.4", "1592.1.0", 1},
		{"both older", "1.28.7", "1443.9.0", "1.33.4", "1592.1.0", "1.33.4", "1592.1.0", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := baseRuntime()
			rt.Spec.Shoot.Kubernetes.Version = ptr.To(tt.askedK8s)
			rt.Spec.Shoot.Provider.Workers[0].Machine.Image = &infrav1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To(tt.askedImage)}
			first, err := Render(rt, nil, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			current := first.Shoot.DeepCopy()
			current.Spec.Kubernetes.Version = tt.runningK8s
			current.Spec.Provider.Workers[0].Machine.Image.Version = ptr.To(tt.runningImage)

			r, err := Render(rt, current, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "kubernetes.version", r.Shoot.Spec.Kubernetes.Version, tt.wantK8s)
			expectPtr(t, "machine image version", r.Shoot.Spec.Provider.Workers[0].Machine.Image.Version, tt.wantImage)
			expectEqual(t, "kept", len(r.Kept), tt.wantKept)
		})
	}
}

// TestRenderKeepsTheShootsNetworkLayout renders an update of a shoot whose provider config
// differs from what a new shoot would get: the shoot's config stays byte for byte, as its
// networks are immutable.
func TestRenderKeepsTheShootsNetworkLayout(t *testing.T) {
	rt := baseRuntime()
	current, err := Render(rt, nil, goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	shoot := current.Shoot.DeepCopy()
	existing := `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"id":"vpc-123"},"zones":[{"name":"eu-central-1a","workers":"10.250.0.0/19","public":"10.250.32.0/20","internal":"10.250.48.0/20"}]}}`
	shoot.Spec.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(existing)}
	shoot.Spec.Provider.Workers[0].Zones = []string{"eu-central-1a"}
	rt.Spec.Shoot.Provider.Workers[0].Zones = []string{"eu-central-1a"}

	r, err := Render(rt, shoot, goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	expectRaw(t, "infrastructureConfig", r.Shoot.Spec.Provider.InfrastructureConfig, existing)
}

// TestRenderTerminalErrors checks that a Runtime the provider configs cannot be built for is a
// terminal user error.
func TestRenderTerminalErrors(t *testing.T) {
	rt := baseRuntime()
	rt.Spec.Shoot.Networking.Nodes = "10.250.0.0/30"
	_, err := Render(rt, nil, goldenOptions)
	if err == nil {
		t.Fatal("got no error for a node network too small for three zones")
	}
	if c := retry.Classify(err); c.Class != retry.ClassTerminal || c.Reason != ReasonInvalidRuntime {
		t.Errorf("classification = %s/%s, want %s/%s", c.Class, c.Reason, retry.ClassTerminal, ReasonInvalidRuntime)
	}
	if !errors.Is(err, provider.ErrNodesTooSmall) || !strings.Contains(err.Error(), "spec.shoot.networking.nodes") {
		t.Errorf("error %q does not say the node network is too small", err)
	}
}

// asJSONMap returns v's JSON object.
func asJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRenderBinding checks where the Runtime's binding goes: secretBindingName below Kubernetes
// 1.34, credentialsBindingName from 1.34 on (Gardener forbids secretBindingName there), and a
// shoot already on a credentials binding stays on it.
func TestRenderBinding(t *testing.T) {
	tests := []struct {
		// name describes the case.
		name string
		// version is the Kubernetes version the Runtime asks for.
		version string
		// currentCredentials runs the current shoot on a credentials binding; false means no shoot.
		currentCredentials bool
		// wantCredentials expects credentialsBindingName rather than secretBindingName.
		wantCredentials bool
	}{
		{"1.33 uses the secret binding", "1.33.4", false, false},
		{"1.34 uses the credentials binding", "1.34.1", false, true},
		{"a shoot on a credentials binding stays on it", "1.33.4", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := baseRuntime()
			rt.Spec.Shoot.Kubernetes.Version = ptr.To(tt.version)
			var current *gardencorev1beta1.Shoot
			if tt.currentCredentials {
				first, err := Render(rt, nil, goldenOptions)
				if err != nil {
					t.Fatal(err)
				}
				current = first.Shoot
				current.Spec.SecretBindingName, current.Spec.CredentialsBindingName = nil, ptr.To(rt.Spec.Shoot.SecretBindingName) //nolint:staticcheck // SA1019: a shoot that moved off its secret binding.
			}
			r, err := Render(rt, current, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Shoot.Spec
			if tt.wantCredentials {
				expectPtr(t, "credentialsBindingName", got.CredentialsBindingName, rt.Spec.Shoot.SecretBindingName)
				expectNil(t, "secretBindingName", got.SecretBindingName) //nolint:staticcheck // SA1019: the field under test.
			} else {
				expectPtr(t, "secretBindingName", got.SecretBindingName, rt.Spec.Shoot.SecretBindingName) //nolint:staticcheck // SA1019: the field under test.
				expectNil(t, "credentialsBindingName", got.CredentialsBindingName)
			}
		})
	}
}
