package manager

import (
	"flag"
	"io"
	"testing"

	"k8s.io/utils/ptr"
)

// TestConvertOptionsFromFlags parses the landscape defaults from the command line, as the
// manager and `kubectl runtime render` do, and checks what the converter gets.
func TestConvertOptionsFromFlags(t *testing.T) {
	tests := []struct {
		// name describes the case.
		name string
		// args is the command line.
		args []string
		// wantIssuer is the default OIDC issuer the converter gets; empty means none.
		wantIssuer string
		// wantPrefix is the default provider's username prefix; nil means unset.
		wantPrefix *string
	}{
		{name: "no default OIDC without an issuer", args: []string{"--default-oidc-client-id", "kyma"}},
		{
			name: "default OIDC from its flags",
			args: []string{"--default-oidc-issuer-url", "https://operators.example.com", "--default-oidc-client-id", "ops",
				"--default-oidc-username-claim", "email", "--default-oidc-username-prefix", "-"},
			wantIssuer: "https://operators.example.com",
			wantPrefix: ptr.To("-"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			args := append([]string{"--gardener-project", "landscape", "--default-machine-image", "gardenlinux",
				"--default-machine-image-version", "1592.1.0"}, tt.args...)
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			c := o.ConvertOptions(nil)
			if c.Namespace != "garden-landscape" || c.DefaultMachineImage != "gardenlinux" || c.DefaultMachineImageVersion != "1592.1.0" ||
				c.DefaultKubernetesVersion != DefaultOptions().DefaultKubernetesVersion {
				t.Errorf("convert options = %+v", c)
			}
			if tt.wantIssuer == "" {
				if c.DefaultOIDC != nil {
					t.Errorf("default OIDC = %+v, want none", c.DefaultOIDC)
				}
				return
			}
			if c.DefaultOIDC == nil || ptr.Deref(c.DefaultOIDC.IssuerURL, "") != tt.wantIssuer ||
				ptr.Deref(c.DefaultOIDC.ClientID, "") != "ops" || ptr.Deref(c.DefaultOIDC.UsernameClaim, "") != "email" {
				t.Fatalf("default OIDC = %+v, want issuer %s", c.DefaultOIDC, tt.wantIssuer)
			}
			if !ptr.Equal(c.DefaultOIDC.UsernamePrefix, tt.wantPrefix) {
				t.Errorf("username prefix = %v, want %v", c.DefaultOIDC.UsernamePrefix, tt.wantPrefix)
			}
		})
	}
}
