package gardener

import (
	"errors"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// policyOptions is a landscape with IMDSv2, custom DNS and audit logging on.
func policyOptions() RenderOptions {
	return RenderOptions{
		Namespace: "garden-kyma",
		AWSIMDSv2: true,
		DNS:       &DNS{SecretName: "dns-secret", DomainPrefix: "kyma.example.com", ProviderType: "aws-route53"},
		AuditLog: &AuditLog{PolicyConfigMapName: "audit-policy", Tenants: map[string]map[string]AuditLogTenant{
			"aws": {"eu-central-1": {TenantID: "t", ServiceURL: "https://audit.example.com", SecretName: "audit-secret"}},
		}},
	}
}

// TestRenderLandscapeWins refuses what a Runtime may not set and merges the landscape's
// instance metadata options into every AWS worker.
func TestRenderLandscapeWins(t *testing.T) {
	tests := []struct {
		name string
		// change makes the Runtime set something.
		change func(rt *infrav1.Runtime)
		// current is the live shoot; nil for a new one.
		current func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot
		// refusedField is the field the terminal error names; empty when the render succeeds.
		refusedField string
		// workerConfig is the first worker's providerConfig when the render succeeds.
		workerConfig string
	}{
		{
			name:         "a worker without providerConfig gets the landscape's",
			change:       func(*infrav1.Runtime) {},
			workerConfig: `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"WorkerConfig","instanceMetadataOptions":{"httpTokens":"required","httpPutResponseHopLimit":2}}`,
		},
		{
			name: "a worker's own providerConfig gets the landscape's options merged in",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"nodeTemplate":{"capacity":{"cpu":"2"}}}`)}
			},
			workerConfig: `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","instanceMetadataOptions":{"httpPutResponseHopLimit":2,"httpTokens":"required"},"kind":"WorkerConfig","nodeTemplate":{"capacity":{"cpu":"2"}}}`,
		},
		{
			name: "a stricter hop limit stays",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"instanceMetadataOptions":{"httpPutResponseHopLimit":1}}`)}
			},
			workerConfig: `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","instanceMetadataOptions":{"httpPutResponseHopLimit":1,"httpTokens":"required"},"kind":"WorkerConfig"}`,
		},
		{
			name: "an instance profile is refused",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"iamInstanceProfile":{"name":"admin"}}`)}
			},
			refusedField: "spec.shoot.provider.workers[worker-0].providerConfig.iamInstanceProfile",
		},
		{
			name: "optional session tokens are refused",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"instanceMetadataOptions":{"httpTokens":"optional"}}`)}
			},
			refusedField: "instanceMetadataOptions.httpTokens",
		},
		{
			name: "a longer hop limit is refused",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"instanceMetadataOptions":{"httpPutResponseHopLimit":3}}`)}
			},
			refusedField: "instanceMetadataOptions.httpPutResponseHopLimit",
		},
		{
			name: "an existing VPC is refused",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"id":"vpc-1"}}}`)}
			},
			refusedField: "spec.shoot.provider.infrastructureConfig.networks.vpc.id",
		},
		{
			name: "the VPC the shoot already runs in is allowed",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"id":"vpc-1"},"zones":[]}}`)}
			},
			current: func(*infrav1.Runtime) *gardencorev1beta1.Shoot {
				// The shoot of the Runtime before it named the VPC, moved into it.
				s, _ := shootFromRuntime(baseRuntime(), policyOptions())
				s.Spec.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(`{"networks":{"vpc":{"id":"vpc-1"}}}`)}
				return s
			},
			workerConfig: `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"WorkerConfig","instanceMetadataOptions":{"httpTokens":"required","httpPutResponseHopLimit":2}}`,
		},
		{
			name: "a control plane pool is refused",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].ControlPlane = &gardencorev1beta1.WorkerControlPlane{}
			},
			refusedField: "spec.shoot.provider.workers[worker-0].controlPlane",
		},
		{
			name: "a registry cache may not read the audit log credentials",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.ImageRegistryCache = []infrav1.ImageRegistryCache{{Name: "c", Config: infrav1.RegistryCacheConfigSpec{
					Upstream: "images.example.com", SecretReferenceName: ptr.To(AuditLogCredentialsResource)}}}
			},
			refusedField: "spec.imageRegistryCache[0].config.secretReferenceName",
		},
		{
			name: "a registry cache may not read the DNS credentials",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.ImageRegistryCache = []infrav1.ImageRegistryCache{{Name: "c", Config: infrav1.RegistryCacheConfigSpec{
					Upstream: "images.example.com", SecretReferenceName: ptr.To("dns-secret")}}}
			},
			refusedField: "spec.imageRegistryCache[0].config.secretReferenceName",
		},
		{
			name: "a registry cache with credentials of its own is refused",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.ImageRegistryCache = []infrav1.ImageRegistryCache{{Name: "c", UID: "c0ffee", Config: infrav1.RegistryCacheConfigSpec{
					Upstream: "images.example.com", SecretReferenceName: ptr.To("images-pull-secret")}}}
			},
			refusedField: "spec.imageRegistryCache[0].config.secretReferenceName",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := baseRuntime()
			tt.change(rt)
			var current *gardencorev1beta1.Shoot
			if tt.current != nil {
				current = tt.current(rt)
			}
			r, err := Render(rt, current, policyOptions())
			if tt.refusedField != "" {
				c := retry.Classify(err)
				if !errors.Is(err, ErrFieldNotAllowed) || c.Class != retry.ClassTerminal || !strings.Contains(err.Error(), tt.refusedField) {
					t.Fatalf("error = %v (%s), want a terminal refusal naming %s", err, c.Class, tt.refusedField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			expectRaw(t, "worker providerConfig", r.Shoot.Spec.Provider.Workers[0].ProviderConfig, tt.workerConfig)
		})
	}
}

// TestRenderSystemPrefixRefused refuses OIDC prefixes in Kubernetes' reserved system: names.
func TestRenderSystemPrefixRefused(t *testing.T) {
	for name, set := range map[string]func(*infrav1.OIDCConfig){
		"username prefix": func(o *infrav1.OIDCConfig) { o.UsernamePrefix = ptr.To("system:") },
		"groups prefix": func(o *infrav1.OIDCConfig) {
			o.GroupsClaim, o.GroupsPrefix = ptr.To("groups"), ptr.To("system:masters-")
		},
	} {
		t.Run(name, func(t *testing.T) {
			rt := baseRuntime()
			set(&rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig)
			_, err := Render(rt, nil, policyOptions())
			if !errors.Is(err, ErrSystemPrefix) || retry.Classify(err).Class != retry.ClassTerminal {
				t.Errorf("error = %v, want a terminal ErrSystemPrefix", err)
			}
		})
	}
}
