package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// aclConfigMap is the landscape's ACL ConfigMap in these tests: the operators' networks of
// testdata/landscape/acl-ips.yaml, and as the control plane's NAT address the one the manager
// reaches the runtime clusters from here.
const (
	aclConfigMap   = "kim-acl-ips"
	aclOperators   = `["198.51.100.0/29","203.0.113.16/28"]`
	controlPlaneIP = "127.0.0.1/32"
)

// setUpLandscape creates what the realistic landscape's shoots reference in the garden (the DNS
// provider's Secret, the audit policy and the tenants' credentials) and the ACL ConfigMap.
func setUpLandscape(ctx context.Context) error {
	l, err := landscape.Load(managerOptions().ConverterConfigFilepath)
	if err != nil {
		return err
	}
	c, err := client.New(sim.GardenAdminConfig(), client.Options{})
	if err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	ns := gardensim.ProjectNamespace(project)
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: l.Config.Converter.DNS.SecretName}, StringData: map[string]string{"accessKeyID": "AKIAIOSFODNN7EXAMPLE", "secretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: l.Config.Converter.AuditLog.PolicyConfigMapName}, Data: map[string]string{
			"policy": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"}},
	}
	for _, regions := range l.AuditLogTenants {
		for _, t := range regions {
			objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: t.SecretName}, StringData: map[string]string{"clientID": "id", "clientSecret": "secret"}})
		}
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s: %w", o.GetName(), err)
		}
	}
	acl := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: aclConfigMap}, Data: map[string]string{
		landscape.OperatorCIDRsKey: aclOperators, landscape.ControlPlaneNATKey: fmt.Sprintf("%q", controlPlaneIP)}}
	if err := env.Client.Create(ctx, acl); err != nil {
		return fmt.Errorf("create ACL ConfigMap: %w", err)
	}
	return nil
}

// renderOptions returns the render options the manager renders rt with: the realistic
// landscape, and the ACL addresses as the ConfigMap holds them now.
func renderOptions(t *testing.T, rt *infrav1.Runtime) gardener.RenderOptions {
	t.Helper()
	o := managerOptions()
	l, err := o.Landscape()
	if err != nil {
		t.Fatal(err)
	}
	opts := o.RenderOptions(l)
	opts.ACL = &gardener.ACL{}
	if rt != nil && gardener.NeedsACL(rt) {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: "kcp-system", Name: aclConfigMap}, cm); err != nil {
			t.Fatal(err)
		}
		if opts.ACL, err = landscape.ParseACL(cm); err != nil {
			t.Fatal(err)
		}
	}
	return opts
}

// TestACLKeepsTheControlPlaneIn provisions two runtimes that restrict their API servers: each
// shoot's access list holds the runtime's networks plus the operators' and the control plane's
// addresses from the ACL ConfigMap, and the manager still configures the runtime cluster. Then
// the operators' networks change in the ConfigMap alone, and both shoots follow, their Runtimes
// untouched.
func TestACLKeepsTheControlPlaneIn(t *testing.T) {
	var rts []*infrav1.Runtime
	for _, name := range []string{"acl-1", "acl-2"} {
		rts = append(rts, newRuntimeWith(t, name, func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.20.0.0/16"}}
		}))
	}
	for i, rt := range rts {
		rts[i] = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
		rule := aclRule(t, rt)
		for _, cidr := range []string{"10.20.0.0/16", "198.51.100.0/29", "203.0.113.16/28", controlPlaneIP} {
			if !strings.Contains(rule, cidr) {
				t.Errorf("%s: access list %s lacks %s", rt.Name, rule, cidr)
			}
		}
		assertRuntimeCluster(t, rts[i])
	}

	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: "kcp-system", Name: aclConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data[landscape.OperatorCIDRsKey] = `["198.51.100.0/29","203.0.113.16/28","233.252.0.0/24"]`
	if err := env.Client.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cm.Data[landscape.OperatorCIDRsKey] = aclOperators
		if err := env.Client.Update(context.Background(), cm); err != nil {
			t.Errorf("restore ACL ConfigMap: %v", err)
		}
	})
	for _, rt := range rts {
		err := testenv.Eventually(t.Context(), time.Minute, 200*time.Millisecond, func(context.Context) (bool, error) {
			return strings.Contains(aclRule(t, rt), "233.252.0.0/24"), nil
		})
		if err != nil {
			t.Errorf("%s: the shoot's access list did not take the new operator network: %s", rt.Name, aclRule(t, rt))
		}
		got := waitForRuntime(t, rt, time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
		if got.Generation != rt.Generation {
			t.Errorf("%s: generation %d, want %d: the Runtime was changed", rt.Name, got.Generation, rt.Generation)
		}
	}
}

// TestNoAuditLogTenantFailsAtOnce provisions a runtime in a region the landscape has no audit
// log tenant for: with audit logging mandatory it fails at once as a user error, no shoot made.
func TestNoAuditLogTenantFailsAtOnce(t *testing.T) {
	rt := newRuntimeWith(t, "no-tenant", func(rt *infrav1.Runtime) {
		rt.Spec.Shoot.Region = "us-east-1"
		rt.Spec.Shoot.Provider.Workers[0].Zones = []string{"us-east-1a"}
	})
	got := waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed })
	if r := got.Status.Retry; r == nil || r.Reason != gardener.ReasonAuditLogError || r.Class != "Terminal" || r.Attempt != 0 {
		t.Errorf("retry record = %+v, want a terminal failure with reason %s that spent no attempt", r, gardener.ReasonAuditLogError)
	}
	shoot := &gardencorev1beta1.Shoot{}
	if err := garden.Get(t.Context(), client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}, shoot); !apierrors.IsNotFound(err) {
		t.Errorf("get shoot: %v, want NotFound", err)
	}
}

// TestEUAccessOutsideTheEUIsRefused provisions the upstream gcp example as it is: platform region
// cf-eu11, whose runtimes get the eu-access-only restriction, in us-central1, where the cloud
// profile does not offer it. Gardener refuses the shoot, and the runtime fails at once with
// Gardener's message.
func TestEUAccessOutsideTheEUIsRefused(t *testing.T) {
	rt := upstreamExample(t, "gcp", "eu-access-us")
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRuntime(t, rt) })
	got := waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed })
	if r := got.Status.Retry; r == nil || r.Reason != runtimectrl.ReasonShootRefused || !strings.Contains(r.Message, `spec.accessRestrictions[0]: Unsupported value: "eu-access-only"`) {
		t.Errorf("retry record = %+v, want ShootRefused with Gardener's message", r)
	}
}

// TestACLOnAProviderWithoutACLs provisions the upstream gcp example (in a platform region
// without EU access) restricting its API server. The manager writes access lists only for aws and
// azure, so the runtime gets Ready with the condition APIServerACL False (ACLNotApplied), the shoot
// has no enabled acl extension, and kyma-provisioning-info lists no access list.
func TestACLOnAProviderWithoutACLs(t *testing.T) {
	rt := upstreamExample(t, "gcp", "acl-gcp")
	rt.Spec.Shoot.PlatformRegion = "cf-us10"
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.20.0.0/16"}}
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRuntime(t, rt) })
	got := waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })

	c := meta.FindStatusCondition(got.Status.Conditions, infrav1.ConditionAPIServerACL)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != runtimectrl.ReasonACLNotApplied {
		t.Errorf("condition %s = %+v, want False with reason %s", infrav1.ConditionAPIServerACL, c, runtimectrl.ReasonACLNotApplied)
	}
	if e := shootExtension(t, got, gardener.ExtensionACL); e != nil && (e.Disabled == nil || !*e.Disabled) {
		t.Errorf("shoot has an enabled acl extension: %+v", e)
	}
	info := &corev1.ConfigMap{}
	if err := runtimeClient(t, got).Get(t.Context(), client.ObjectKey{Namespace: runtimectrl.KymaNamespace, Name: runtimectrl.ProvisioningInfoName}, info); err != nil {
		t.Fatalf("kyma-provisioning-info: %v", err)
	}
	if details := info.Data["details"]; details == "" || strings.Contains(details, "kubeAPIServerACL") || strings.Contains(details, "10.20.0.0/16") {
		t.Errorf("kyma-provisioning-info reports an access list the API server does not have:\n%s", details)
	}
}

// TestLandscapeRefusalsReachTheRuntime takes away what the landscape's shoots need in the
// garden, one at a time: the registration of an extension they list, and the DNS provider's
// Secret. Gardener refuses the shoot, the runtime fails at once as a user error with Gardener's
// message, and once the garden is fixed a manual retry provisions it.
func TestLandscapeRefusalsReachTheRuntime(t *testing.T) {
	dnsSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: gardensim.ProjectNamespace(project), Name: "aws-route53-secret"}}
	tests := []struct {
		name          string
		breakIt, mend func(ctx context.Context) error
		want          string // a fragment of Gardener's message
	}{
		{
			name: "unregistered extension",
			breakIt: func(ctx context.Context) error {
				return sim.SetExtensionRegistered(ctx, gardener.ExtensionAuditLog, false)
			},
			mend: func(ctx context.Context) error {
				return sim.SetExtensionRegistered(ctx, gardener.ExtensionAuditLog, true)
			},
			want: "given Shoot uses non-registered extension type",
		},
		{
			name: "DNS provider without its secret",
			breakIt: func(ctx context.Context) error {
				if err := garden.Get(ctx, client.ObjectKeyFromObject(dnsSecret), dnsSecret); err != nil {
					return err
				}
				return garden.Delete(ctx, dnsSecret)
			},
			mend: func(ctx context.Context) error {
				dnsSecret.ResourceVersion, dnsSecret.UID, dnsSecret.CreationTimestamp = "", "", metav1.Time{}
				return garden.Create(ctx, dnsSecret)
			},
			want: `failed to resolve resource reference "aws-route53-secret"`,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.breakIt(t.Context()); err != nil {
				t.Fatal(err)
			}
			mended := false
			t.Cleanup(func() {
				if !mended {
					if err := tt.mend(context.Background()); err != nil {
						t.Errorf("mend the garden: %v", err)
					}
				}
			})
			rt := newRuntime(t, fmt.Sprintf("refused-%d", i))
			rt = waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed })
			if r := rt.Status.Retry; r == nil || r.Reason != runtimectrl.ReasonShootRefused || !strings.Contains(r.Message, tt.want) {
				t.Errorf("retry record = %+v, want %s with %q", r, runtimectrl.ReasonShootRefused, tt.want)
			}
			if err := tt.mend(t.Context()); err != nil {
				t.Fatal(err)
			}
			mended = true
			if rt.Annotations == nil {
				rt.Annotations = map[string]string{}
			}
			rt.Annotations[infrav1.RetryRequestedAtAnnotation] = "2026-01-01T00:00:00Z" // the garden is mended
			if err := env.Client.Update(t.Context(), rt); err != nil {
				t.Fatal(err)
			}
			waitForRuntime(t, rt, 2*time.Minute, "Ready after the garden is mended", func(rt *infrav1.Runtime) bool {
				return rt.Status.State == infrav1.StateReady
			})
		})
	}
}

// aclRule returns the providerConfig of the runtime's shoot's acl extension, "" without one.
func aclRule(t *testing.T, rt *infrav1.Runtime) string {
	t.Helper()
	if e := shootExtension(t, rt, gardener.ExtensionACL); e != nil && e.ProviderConfig != nil {
		return string(e.ProviderConfig.Raw)
	}
	return ""
}
