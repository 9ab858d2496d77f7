package landscape

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// dir is the directory of the landscape configurations the tests read.
var dir = filepath.Join(testenv.FixturesDir(), "landscape")

// TestLoadRealistic reads the realistic configuration and the files it names, and checks what
// the render gets from them.
func TestLoadRealistic(t *testing.T) {
	l, err := Load(filepath.Join(dir, "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := l.RenderOptions(Options{AuditLogMandatory: true})
	if c.Namespace != "garden-kyma" || c.DefaultKubernetesVersion != "1.33.4" || c.DefaultMachineImage != "gardenlinux" ||
		c.DefaultMachineImageVersion != "1592.1.0" || !c.KubernetesAutoUpdate || c.MachineImageAutoUpdate {
		t.Errorf("defaults = %+v", c)
	}
	if c.DNS == nil || c.DNS.DomainPrefix != "kyma.example.com" || c.DNS.ProviderType != "aws-route53" || c.DNS.SecretName != "aws-route53-secret" {
		t.Errorf("DNS = %+v", c.DNS)
	}
	if c.AuditLog == nil || !c.AuditLog.Mandatory || c.AuditLog.PolicyConfigMapName != "audit-policy" ||
		c.AuditLog.Tenants["aws"]["eu-central-1"].SecretName != "auditlog-credentials-aws-eu" {
		t.Errorf("audit log = %+v", c.AuditLog)
	}
	if w := c.MaintenanceWindows["eastus"]; w.Begin != "030000+0000" || w.End != "070000+0000" {
		t.Errorf("maintenance window of eastus = %+v", w)
	}
	if c.MaxTokenExpiration != 1440*time.Hour || !c.KubeAPIServerFeatureGates["ClusterTrustBundle"] ||
		!c.KubeletFeatureGates["GracefulNodeShutdown"] || !c.AWSIMDSv2 || c.DualStackDisabled {
		t.Errorf("API server, kubelet and provider settings = %+v", c)
	}
	if len(c.Tolerations["eu-de-1"]) != 1 || c.DefaultOIDC == nil || *c.DefaultOIDC.IssuerURL != "https://operators.accounts.example.com" {
		t.Errorf("tolerations or OIDC = %+v / %+v", c.Tolerations, c.DefaultOIDC)
	}
	if l.ACLConfigMapName() != "kim-acl-ips" {
		t.Errorf("ACL ConfigMap = %q", l.ACLConfigMapName())
	}
	mcm := c.WorkerMachineControllerManager
	if mcm == nil || ptr.Deref(mcm.MaxEvictRetries, 0) != 30 || mcm.MachineDrainTimeout == nil || mcm.MachineDrainTimeout.Duration != 48*time.Hour {
		t.Errorf("workers' drain settings = %+v", mcm)
	}
}

// TestLoadWindowForms reads the maintenance windows in upstream's plain map and in the
// ConfigMap manifest, which must give the same windows.
func TestLoadWindowForms(t *testing.T) {
	plain, err := loadWindows(filepath.Join(dir, "maintenance-windows.json"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := loadWindows(filepath.Join(dir, "maintenance-windows.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 3 || !reflect.DeepEqual(plain, manifest) {
		t.Errorf("plain map %+v, manifest %+v: want the same three windows", plain, manifest)
	}
}

// TestLoadMinimal reads a configuration with only the required fields: Gardener's DNS, no
// tenants, no windows, no ACL ConfigMap.
func TestLoadMinimal(t *testing.T) {
	l, err := Load(filepath.Join(dir, "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := l.RenderOptions(Options{})
	if c.DNS != nil || len(c.AuditLog.Tenants) != 0 || c.MaintenanceWindows != nil || c.Tolerations != nil ||
		c.KubernetesAutoUpdate || c.AWSIMDSv2 || !c.DualStackDisabled || l.ACLConfigMapName() != "" {
		t.Errorf("minimal configuration gives %+v", c)
	}
}

// TestLoadRefuses checks that every mistake stops the load with the file and the field.
func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		file string // in testdata/landscape/invalid
		want string // a fragment of the error
		// wantFile is the file the error names; the configuration itself when empty.
		wantFile string
	}{
		{"unknown-field.json", `unknown field "converter.kubernetes.enableKubernetesVersionAutoUpdates"`, ""},
		{"missing-version.json", "converter.kubernetes.defaultVersion: Required value", ""},
		{"wrong-type.json", "field converter.provider.aws.enableIMDSv2: cannot take a JSON string, it must be a bool", ""},
		{"partial-dns.json", "converter.dns.providerType: Required value", ""},
		{"bad-tenant.json", "aws[eu-central-1].secretName: Required value", "tenants-without-secret.json"},
		{"bad-drain.json", `converter.provider.worker.defaultMaxEvictRetries: Invalid value: "thirty"`, ""},
		{"unknown-worker-field.json", `unknown field "converter.provider.worker.defaultMaxEvictRetry"`, ""},
		{"bad-window.json", `[eu-central-1].begin: Invalid value: "25:00"`, "windows-bad-time.json"},
		{"does-not-exist.json", "no such file", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, "invalid", tt.file)
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			wantFile := path
			if tt.wantFile != "" {
				wantFile = filepath.Join(dir, "invalid", tt.wantFile)
			}
			if !strings.Contains(err.Error(), wantFile) {
				t.Errorf("error %q does not name the file %s", err, wantFile)
			}
		})
	}
	var e *Error
	if _, err := Load(filepath.Join(dir, "invalid", "missing-version.json")); !errors.As(err, &e) || len(e.Errs) != 1 {
		t.Errorf("error = %v, want one *Error with one field", err)
	}
}

// TestParseACL reads the ACL ConfigMap and refuses addresses that are not CIDRs.
func TestParseACL(t *testing.T) {
	cm := func(operators, nat string) *corev1.ConfigMap {
		return &corev1.ConfigMap{Data: map[string]string{OperatorCIDRsKey: operators, ControlPlaneNATKey: nat}}
	}
	acl, err := ParseACL(cm(`["198.51.100.0/29","203.0.113.16/28"]`, `"192.0.2.10/32"`))
	if err != nil {
		t.Fatal(err)
	}
	if len(acl.OperatorCIDRs) != 2 || acl.ControlPlaneCIDR != "192.0.2.10/32" {
		t.Errorf("ACL = %+v", acl)
	}
	for name, c := range map[string]*corev1.ConfigMap{
		"data[acl-list.json][1]":          cm(`["198.51.100.0/29","not-a-cidr"]`, `"192.0.2.10/32"`),
		"data[kcp-external-nat-ip.json]":  cm(`[]`, `"192.0.2.10"`),
		"data[acl-list.json]: Invalid":    cm(`198.51.100.0/29`, `"192.0.2.10/32"`),
		"data[kcp-external-nat-ip.json]:": cm(`[]`, ``),
	} {
		if _, err := ParseACL(c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error = %v, want one naming %s", err, name)
		}
	}
	if ACLFingerprint(cm(`[]`, `"a"`)) == ACLFingerprint(cm(`[]`, `"b"`)) || ACLFingerprint(nil) != "" {
		t.Error("fingerprints do not tell the addresses apart")
	}
}

// TestSharedTenantIsTheDefaultAdditionalProvider gives a Runtime without additional providers
// the landscape's shared identity tenant, and one with an empty list none.
func TestSharedTenantIsTheDefaultAdditionalProvider(t *testing.T) {
	l, err := Load(filepath.Join(dir, "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	shared := l.RenderOptions(Options{}).DefaultAdditionalOIDC
	if shared == nil || *shared.IssuerURL != "https://kyma.accounts.example.com" || *shared.ClientID != "shared-ias-client" {
		t.Fatalf("shared tenant = %+v", shared)
	}
	rt := testenv.ReadRuntime(t, filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = nil
	if got := gardener.OpenIDConnects(rt, shared); len(got) != 1 || got[0].GetName() != "kyma-oidc-0" {
		t.Errorf("OpenIDConnects = %v, want kyma-oidc-0 from the shared tenant", got)
	}
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{}
	if got := gardener.OpenIDConnects(rt, shared); len(got) != 0 {
		t.Errorf("OpenIDConnects = %v, want none for an empty list", got)
	}
}
