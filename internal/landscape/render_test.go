package landscape

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

var update = flag.Bool("update", false, "rewrite the golden renders in testdata/render")

// testACL is what testdata/landscape/acl-ips.yaml holds.
var testACL = &gardener.ACL{OperatorCIDRs: []string{"198.51.100.0/29", "203.0.113.16/28"}, ControlPlaneCIDR: "192.0.2.10/32"}

// realistic returns the render options of the realistic landscape, ACLs on.
func realistic(t *testing.T) gardener.RenderOptions {
	t.Helper()
	l, err := Load(filepath.Join(dir, "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return l.RenderOptions(Options{AuditLogMandatory: true, ACL: testACL})
}

// minimal returns the render options of the minimal landscape; without tenants audit
// logging cannot be mandatory.
func minimal(t *testing.T) gardener.RenderOptions {
	t.Helper()
	l, err := Load(filepath.Join(dir, "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	return l.RenderOptions(Options{})
}

// TestRenderGolden renders every upstream example Runtime and every maximal Runtime under the
// realistic and the minimal landscape, and the upstream aws example at Kubernetes 1.35 under the
// realistic one, and compares the objects with testdata/render/<dir>/<file>. Review a change
// with `go test ./internal/landscape -run TestRenderGolden -update` and git diff.
func TestRenderGolden(t *testing.T) {
	type golden struct {
		// dir is the directory of the golden render under testdata/render.
		dir string
		// opts are the landscape's render options.
		opts gardener.RenderOptions
		// file is the Runtime rendered.
		file string
		// version overrides the Runtime's Kubernetes version; empty keeps it.
		version string
		// check asserts what the case is about beyond the golden bytes; nil checks nothing more.
		check func(t *testing.T, s *gardencorev1beta1.Shoot)
	}
	var cases []golden
	for name, opts := range map[string]gardener.RenderOptions{"realistic": realistic(t), "minimal": minimal(t)} {
		for _, file := range testenv.RuntimeFiles(t) {
			cases = append(cases, golden{dir: name, opts: opts, file: file})
		}
	}
	cases = append(cases, golden{
		dir: "realistic-1.35", opts: realistic(t), version: "1.35.0",
		file:  filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"),
		check: expectDNSCredentialsRef,
	})
	for _, tc := range cases {
		t.Run(tc.dir+"/"+filepath.Base(tc.file), func(t *testing.T) {
			rt := testenv.ReadRuntime(t, tc.file)
			if tc.version != "" {
				rt.Spec.Shoot.Kubernetes.Version = ptr.To(tc.version)
			}
			r, err := gardener.Render(rt, nil, tc.opts)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if tc.check != nil {
				tc.check(t, r.Shoot)
			}
			got, err := r.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "render", tc.dir, filepath.Base(tc.file))
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden render (run with -update to write it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("render of %s differs from %s; run with -update and review the diff\n--- got\n%s", tc.file, golden, got)
			}
		})
	}
}

// expectDNSCredentialsRef checks the DNS of a shoot from Kubernetes 1.35 on with the realistic
// landscape's provider: spec.dns names the Secret by credentialsRef only (Gardener forbids
// secretName there), spec.resources references it, and the shoot-dns-service providerConfig
// names it by credentials, not secretName, and replicates the provider into the shoot.
func expectDNSCredentialsRef(t *testing.T, s *gardencorev1beta1.Shoot) {
	t.Helper()
	const secret = "aws-route53-secret"
	if s.Spec.DNS == nil || len(s.Spec.DNS.Providers) != 1 { //nolint:staticcheck // SA1019: the provider the render sets.
		t.Fatalf("dns = %+v, want one provider", s.Spec.DNS)
	}
	p := s.Spec.DNS.Providers[0] //nolint:staticcheck // SA1019: as above.
	want := &autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret}
	if p.CredentialsRef == nil || *p.CredentialsRef != *want {
		t.Errorf("dns provider credentialsRef = %+v, want %+v", p.CredentialsRef, want)
	}
	if p.SecretName != nil { //nolint:staticcheck // SA1019: the field Gardener forbids from 1.35 on, checked absent.
		t.Errorf("dns provider secretName = %q, want none", *p.SecretName) //nolint:staticcheck // SA1019: as above.
	}
	if !hasResource(s, secret) {
		t.Errorf("resources %+v lack %s", s.Spec.Resources, secret)
	}
	var cfg struct {
		DNSProviderReplication *struct {
			Enabled bool `json:"enabled"`
		} `json:"dnsProviderReplication"`
		Providers []map[string]any `json:"providers"`
	}
	if err := json.Unmarshal([]byte(providerConfig(t, s, gardener.ExtensionDNS)), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.DNSProviderReplication == nil || !cfg.DNSProviderReplication.Enabled {
		t.Errorf("shoot-dns-service dnsProviderReplication = %+v, want enabled", cfg.DNSProviderReplication)
	}
	if len(cfg.Providers) != 1 || cfg.Providers[0]["credentials"] != secret || cfg.Providers[0]["secretName"] != nil {
		t.Errorf("shoot-dns-service providers = %v, want one with credentials %s and no secretName", cfg.Providers, secret)
	}
}

// TestRenderLandscapeItems shows each setting of the landscape in the shoot, and its absence
// when the landscape turns it off. The runtime is the upstream aws example: production, in
// eu-central-1, platform region cf-eu11, restricting its API server.
func TestRenderLandscapeItems(t *testing.T) {
	file := filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml")
	tests := []struct {
		name string
		// off changes the realistic landscape so that the setting is off.
		off func(o *gardener.RenderOptions, rt *infrav1.Runtime)
		// on checks the setting in the shoot of the realistic landscape; absent checks that the
		// shoot of the changed landscape lacks it.
		on, absent func(t *testing.T, s *gardencorev1beta1.Shoot)
		// version is the Runtime's Kubernetes version; empty keeps the example's.
		version string
	}{
		{
			name: "credentials binding",
			off:  func(o *gardener.RenderOptions, _ *infrav1.Runtime) { o.CredentialsBinding = false },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if ptr.Deref(s.Spec.CredentialsBindingName, "") != "hyperscaler secret" || s.Spec.SecretBindingName != nil { //nolint:staticcheck // SA1019: the test shows it is not set.
					t.Errorf("credentialsBindingName = %v, secretBindingName = %v", s.Spec.CredentialsBindingName, s.Spec.SecretBindingName) //nolint:staticcheck // SA1019: as above.
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if s.Spec.CredentialsBindingName != nil || ptr.Deref(s.Spec.SecretBindingName, "") != "hyperscaler secret" { //nolint:staticcheck // SA1019: below 1.34 the binding is a secret binding.
					t.Errorf("credentialsBindingName = %v, want a secret binding", s.Spec.CredentialsBindingName)
				}
			},
		},
		{
			name: "custom DNS with the landscape's provider",
			off:  func(o *gardener.RenderOptions, _ *infrav1.Runtime) { o.DNS = nil },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if s.Spec.DNS == nil || ptr.Deref(s.Spec.DNS.Domain, "") != "aws-full.kyma.example.com" ||
					len(s.Spec.DNS.Providers) != 1 || ptr.Deref(s.Spec.DNS.Providers[0].Type, "") != "aws-route53" { //nolint:staticcheck // SA1019: the field the render sets.
					t.Errorf("dns = %+v", s.Spec.DNS)
				}
				if !hasResource(s, "aws-route53-secret") || !strings.Contains(providerConfig(t, s, gardener.ExtensionDNS), `"secretName":"aws-route53-secret"`) {
					t.Errorf("the DNS secret is not referenced: resources %+v", s.Spec.Resources)
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if s.Spec.DNS != nil || hasResource(s, "aws-route53-secret") || strings.Contains(providerConfig(t, s, gardener.ExtensionDNS), "secretName") {
					t.Errorf("dns = %+v, want Gardener's default domain", s.Spec.DNS)
				}
			},
		},
		{
			name: "shared audit logging",
			off:  func(o *gardener.RenderOptions, _ *infrav1.Runtime) { o.AuditLog = nil },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				cfg := providerConfig(t, s, gardener.ExtensionAuditLog)
				if !strings.Contains(cfg, `"tenantID":"tenant-aws-eu"`) || !hasResource(s, gardener.AuditLogCredentialsResource) {
					t.Errorf("audit log extension %s, resources %+v", cfg, s.Spec.Resources)
				}
				if a := s.Spec.Kubernetes.KubeAPIServer.AuditConfig; a == nil || a.AuditPolicy.ConfigMapRef.Name != "audit-policy" {
					t.Errorf("auditConfig = %+v", a)
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if hasExtension(s, gardener.ExtensionAuditLog) || hasResource(s, gardener.AuditLogCredentialsResource) || s.Spec.Kubernetes.KubeAPIServer.AuditConfig != nil {
					t.Error("audit logging is configured")
				}
			},
		},
		{
			name: "EU access restriction for an EU platform region",
			off:  func(_ *gardener.RenderOptions, rt *infrav1.Runtime) { rt.Spec.Shoot.PlatformRegion = "cf-eu10" },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if len(s.Spec.AccessRestrictions) != 1 || s.Spec.AccessRestrictions[0].Name != gardener.AccessRestrictionEUAccess {
					t.Errorf("accessRestrictions = %+v", s.Spec.AccessRestrictions)
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if len(s.Spec.AccessRestrictions) != 0 {
					t.Errorf("accessRestrictions = %+v", s.Spec.AccessRestrictions)
				}
			},
		},
		{
			name: "maintenance window of a production runtime's region",
			off:  func(_ *gardener.RenderOptions, rt *infrav1.Runtime) { rt.Spec.Shoot.Purpose = "evaluation" },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if w := s.Spec.Maintenance.TimeWindow; w == nil || w.Begin != "200000+0000" || w.End != "000000+0000" {
					t.Errorf("timeWindow = %+v", w)
				}
				if !s.Spec.Maintenance.AutoUpdate.KubernetesVersion || ptr.Deref(s.Spec.Maintenance.AutoUpdate.MachineImageVersion, true) {
					t.Errorf("autoUpdate = %+v", s.Spec.Maintenance.AutoUpdate)
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if s.Spec.Maintenance.TimeWindow != nil {
					t.Errorf("timeWindow = %+v, want Gardener's", s.Spec.Maintenance.TimeWindow)
				}
			},
		},
		{
			name: "token expiration bounds",
			off:  func(o *gardener.RenderOptions, _ *infrav1.Runtime) { o.MaxTokenExpiration = 0 },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				expectTokenExpiration(t, s, 1440*time.Hour)
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				expectTokenExpiration(t, s, gardener.MinTokenExpiration)
			},
		},
		{
			name: "feature gates and runtime config",
			// The runtime config enables an API from Kubernetes 1.33 on; below, it is left out.
			version: "1.33.4",
			off: func(o *gardener.RenderOptions, _ *infrav1.Runtime) {
				o.KubeAPIServerFeatureGates, o.KubeAPIServerRuntimeConfig, o.KubeletFeatureGates = nil, nil, nil
			},
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				api := s.Spec.Kubernetes.KubeAPIServer
				if !api.FeatureGates["ClusterTrustBundle"] || !api.RuntimeConfig["certificates.k8s.io/v1beta1/clustertrustbundles"] ||
					s.Spec.Kubernetes.Kubelet == nil || !s.Spec.Kubernetes.Kubelet.FeatureGates["GracefulNodeShutdown"] {
					t.Errorf("kubernetes = %+v", s.Spec.Kubernetes)
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				api := s.Spec.Kubernetes.KubeAPIServer
				if api.FeatureGates != nil || api.RuntimeConfig != nil || s.Spec.Kubernetes.Kubelet != nil {
					t.Errorf("kubernetes = %+v", s.Spec.Kubernetes)
				}
			},
		},
		{
			name: "tolerations of the region",
			off: func(o *gardener.RenderOptions, _ *infrav1.Runtime) {
				o.Tolerations = map[string][]gardencorev1beta1.Toleration{"us-east-1": {{Key: "dedicated"}}}
			},
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if len(s.Spec.Tolerations) != 1 || s.Spec.Tolerations[0].Key != "dedicated" {
					t.Errorf("tolerations = %+v", s.Spec.Tolerations)
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if len(s.Spec.Tolerations) != 0 {
					t.Errorf("tolerations = %+v", s.Spec.Tolerations)
				}
			},
		},
		{
			name: "AWS IMDSv2",
			off:  func(o *gardener.RenderOptions, _ *infrav1.Runtime) { o.AWSIMDSv2 = false },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				for _, w := range s.Spec.Provider.Workers {
					if w.ProviderConfig == nil || !strings.Contains(string(w.ProviderConfig.Raw), `"httpTokens":"required"`) {
						t.Errorf("worker %s providerConfig = %v", w.Name, w.ProviderConfig)
					}
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				for _, w := range s.Spec.Provider.Workers {
					if w.ProviderConfig != nil {
						t.Errorf("worker %s providerConfig = %s", w.Name, w.ProviderConfig.Raw)
					}
				}
			},
		},
		{
			name: "ACL with the operators' and the control plane's addresses",
			off:  func(o *gardener.RenderOptions, _ *infrav1.Runtime) { o.ACL = nil },
			on: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				cfg := providerConfig(t, s, gardener.ExtensionACL)
				for _, cidr := range []string{"198.51.100.0/29", "203.0.113.16/28", "192.0.2.10/32"} {
					if !strings.Contains(cfg, cidr) {
						t.Errorf("acl %s lacks %s", cfg, cidr)
					}
				}
			},
			absent: func(t *testing.T, s *gardencorev1beta1.Shoot) {
				if hasExtension(s, gardener.ExtensionACL) {
					t.Error("acl extension listed with ACLs off")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := testenv.ReadRuntime(t, file)
			rt.Spec.Shoot.Region = "eu-central-1"
			if tt.version != "" {
				rt.Spec.Shoot.Kubernetes.Version = ptr.To(tt.version)
			}
			rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.0.0.0/8"}}
			opts := realistic(t)
			opts.CredentialsBinding = true
			opts.Tolerations = map[string][]gardencorev1beta1.Toleration{"eu-central-1": {{Key: "dedicated"}}}
			tt.on(t, render(t, rt, opts))
			tt.off(&opts, rt)
			tt.absent(t, render(t, rt, opts))
		})
	}
}

// TestRenderAuditLogMandatory fails a runtime in a region without a tenant as a user error when
// audit logging is mandatory, and leaves audit logging out when it is not.
func TestRenderAuditLogMandatory(t *testing.T) {
	rt := testenv.ReadRuntime(t, filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	rt.Spec.Shoot.Region = "us-east-1"
	opts := realistic(t)
	_, err := gardener.Render(rt, nil, opts)
	if c := retry.Classify(err); c.Class != retry.ClassTerminal || c.Reason != gardener.ReasonAuditLogError || !errors.Is(err, gardener.ErrNoAuditLogTenant) {
		t.Errorf("error = %v (%s/%s), want terminal %s", err, c.Class, c.Reason, gardener.ReasonAuditLogError)
	}
	if err == nil || !strings.Contains(err.Error(), "provider aws in region us-east-1") {
		t.Errorf("error %v does not name the provider and region", err)
	}
	opts.AuditLog.Mandatory = false
	if s := render(t, rt, opts); hasExtension(s, gardener.ExtensionAuditLog) {
		t.Error("audit log extension without a tenant")
	}
}

// TestRenderExistingShootKeepsDNSAndWindow renders an update of a shoot on Gardener's default
// domain with a maintenance window Gardener chose: the landscape's custom DNS never replaces a
// domain (Gardener forbids it) and the window stays where it is.
func TestRenderExistingShootKeepsDNSAndWindow(t *testing.T) {
	rt := testenv.ReadRuntime(t, filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	rt.Spec.Shoot.Purpose = "evaluation"
	current := render(t, rt, minimal(t))
	current.Spec.DNS = &gardencorev1beta1.DNS{Domain: ptr.To("aws-full.kyma.garden.example.com")}
	current.Spec.Maintenance.TimeWindow = &gardencorev1beta1.MaintenanceTimeWindow{Begin: "130000+0000", End: "140000+0000"}
	r, err := gardener.Render(rt, current, realistic(t))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Shoot
	if s.Spec.DNS == nil || ptr.Deref(s.Spec.DNS.Domain, "") != "aws-full.kyma.garden.example.com" || len(s.Spec.DNS.Providers) != 0 { //nolint:staticcheck // SA1019: the field the render must not set here.
		t.Errorf("dns = %+v, want the shoot's own", s.Spec.DNS)
	}
	if hasResource(s, "aws-route53-secret") {
		t.Error("the landscape's DNS secret is referenced by a shoot that does not use it")
	}
	if w := s.Spec.Maintenance.TimeWindow; w == nil || w.Begin != "130000+0000" {
		t.Errorf("timeWindow = %+v, want the shoot's own", w)
	}
}

func render(t *testing.T, rt *infrav1.Runtime, opts gardener.RenderOptions) *gardencorev1beta1.Shoot {
	t.Helper()
	r, err := gardener.Render(rt, nil, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return r.Shoot
}

func hasExtension(s *gardencorev1beta1.Shoot, typ string) bool {
	return slices.ContainsFunc(s.Spec.Extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == typ })
}

func hasResource(s *gardencorev1beta1.Shoot, name string) bool {
	return slices.ContainsFunc(s.Spec.Resources, func(r gardencorev1beta1.NamedResourceReference) bool { return r.Name == name })
}

// providerConfig returns the providerConfig of the shoot's extension typ, failing without one.
func providerConfig(t *testing.T, s *gardencorev1beta1.Shoot, typ string) string {
	t.Helper()
	for _, e := range s.Spec.Extensions {
		if e.Type == typ && e.ProviderConfig != nil {
			return string(e.ProviderConfig.Raw)
		}
	}
	t.Fatalf("no %s extension with a providerConfig in %+v", typ, s.Spec.Extensions)
	return ""
}

func expectTokenExpiration(t *testing.T, s *gardencorev1beta1.Shoot, want time.Duration) {
	t.Helper()
	sa := s.Spec.Kubernetes.KubeAPIServer.ServiceAccountConfig
	if sa == nil || sa.MaxTokenExpiration == nil || sa.MaxTokenExpiration.Duration != want || ptr.Deref(sa.ExtendTokenExpiration, true) {
		t.Errorf("serviceAccountConfig = %+v, want maxTokenExpiration %s without extension", sa, want)
	}
}
