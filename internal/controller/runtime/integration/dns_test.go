package integration_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv/upstream"
)

// dnsSecret is the realistic landscape's DNS provider Secret.
const dnsSecret = "aws-route53-secret"

// TestDNSCredentialsRefOnUpgradeTo135 takes over a Ready runtime whose shoot upstream's manager
// created at Kubernetes 1.34.1 on the realistic landscape's custom DNS, its provider named by
// secretName (field manager kim, a typed create, as upstream writes it), then asks the Runtime
// for Kubernetes 1.35.0, from which Gardener forbids spec.dns.providers[].secretName. The
// manager's write is accepted (no refusal from Gardener), and the shoot ends at 1.35.0 with the
// provider named by credentialsRef alone, no secretName left by upstream's field manager; the
// shoot-dns-service providerConfig keeps dnsProviderReplication and the providers the shoot had
// (mergeDNSConfig: while the extension synchronises them from spec.dns, its mutator rewrites
// them on a reconciling write); the runtime gets Ready.
func TestDNSCredentialsRefOnUpgradeTo135(t *testing.T) {
	ctx := t.Context()
	rt := kebRuntime(t, "dns-up-1")
	rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.34.1")
	rt.Spec.Security.Administrators = []string{"admin@example.com"}
	shoot := leaveShootAsUpstream(t, rt, true)
	leaveClusterAsUpstream(t, rt, shoot, "admin@example.com", "nobody@example.com")

	// What upstream left: 1.34.1, the provider by secretName, and upstream's field manager
	// owning spec.dns.
	if got := shoot.Spec.Kubernetes.Version; got != "1.34.1" {
		t.Fatalf("upstream's shoot runs %s, want 1.34.1", got)
	}
	if p := primaryDNSProvider(t, shoot); ptr.Deref(p.SecretName, "") != dnsSecret { //nolint:staticcheck // SA1019: the field upstream writes below 1.35.
		t.Fatalf("upstream's DNS provider %+v, want secretName %s", p, dnsSecret)
	}
	if owners := dnsProviderOwners(t, shoot); !slices.Contains(owners, upstream.ShootFieldManager+" (Update)") {
		t.Fatalf("owners of spec.dns.providers: %v, want upstream's %s among them", owners, upstream.ShootFieldManager)
	}
	upstreamProviders := dnsExtensionConfig(t, shoot).Providers

	rt.Finalizers = []string{runtimectrl.UpstreamFinalizer}
	if err := env.Client.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRuntime(t, rt) })
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after the takeover", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady && rt.Status.ProvisioningCompleted
	})

	before := gardenCalls(t)
	rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.35.0")
	if err := env.Client.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	rt = waitReadyAt(t, rt, rt.Generation)
	calls := diffCalls(before, gardenCalls(t))
	t.Logf("upgrade to 1.35.0: Gardener calls (verb/code: count) %v", calls)
	if refusals := gardenRefusals(calls); len(refusals) != 0 {
		t.Errorf("Gardener refused writes of the upgrade: %v", refusals)
	}
	if calls["patch/200"] < 1 {
		t.Errorf("Gardener calls %v, want the shoot applied", calls)
	}

	shoot = getShoot(t, rt.Spec.Shoot.Name)
	if got := shoot.Spec.Kubernetes.Version; got != "1.35.0" {
		t.Errorf("shoot Kubernetes version %s, want 1.35.0", got)
	}
	expectDNSProviderByCredentialsRef(t, shoot)
	// Gardener's schema has spec.dns.providers as an atomic list: the manager's forced apply
	// takes the whole list over, so no field of upstream's provider stays behind.
	if owners, want := dnsProviderOwners(t, shoot), []string{runtimectrl.FieldOwner + " (Apply)"}; !slices.Equal(owners, want) {
		t.Errorf("owners of spec.dns.providers: %v, want %v", owners, want)
	}
	cfg := dnsExtensionConfig(t, shoot)
	if cfg.DNSProviderReplication == nil || !cfg.DNSProviderReplication.Enabled || !cfg.SyncProvidersFromShootSpecDNS {
		t.Errorf("%s providerConfig: dnsProviderReplication %+v, syncProvidersFromShootSpecDNS %v, want both on", gardener.ExtensionDNS, cfg.DNSProviderReplication, cfg.SyncProvidersFromShootSpecDNS)
	}
	if !reflect.DeepEqual(cfg.Providers, upstreamProviders) {
		t.Errorf("%s providerConfig providers %v, want those upstream's shoot had, %v", gardener.ExtensionDNS, cfg.Providers, upstreamProviders)
	}
	want, err := runtimectrl.Render(rt, shoot, renderOptions(t, rt))
	if err != nil {
		t.Fatal(err)
	}
	testenv.AssertSubset(t, "shoot spec", toJSON(t, want.Shoot.Spec), toJSON(t, shoot.Spec))
}

// TestNewRuntimeAt135NamesDNSByCredentialsRef provisions a runtime at Kubernetes 1.35.0 on the
// realistic landscape's custom DNS: Gardener accepts the shoot with the DNS provider named by
// credentialsRef alone, and the runtime gets Ready.
func TestNewRuntimeAt135NamesDNSByCredentialsRef(t *testing.T) {
	before := gardenCalls(t)
	rt := newRuntimeWith(t, "dns-new-1", func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.35.0") })
	rt = waitReadyAt(t, rt, 1)
	if refusals := gardenRefusals(diffCalls(before, gardenCalls(t))); len(refusals) != 0 {
		t.Errorf("Gardener refused writes: %v", refusals)
	}
	shoot := getShoot(t, rt.Spec.Shoot.Name)
	if got := shoot.Spec.Kubernetes.Version; got != "1.35.0" {
		t.Errorf("shoot Kubernetes version %s, want 1.35.0", got)
	}
	expectDNSProviderByCredentialsRef(t, shoot)
	cfg := dnsExtensionConfig(t, shoot)
	if cfg.DNSProviderReplication == nil || !cfg.DNSProviderReplication.Enabled {
		t.Errorf("%s providerConfig: dnsProviderReplication %+v, want enabled", gardener.ExtensionDNS, cfg.DNSProviderReplication)
	}
	if len(cfg.Providers) != 1 || cfg.Providers[0]["credentials"] != dnsSecret || cfg.Providers[0]["secretName"] != nil {
		t.Errorf("%s providerConfig providers %v, want one with credentials %s and no secretName", gardener.ExtensionDNS, cfg.Providers, dnsSecret)
	}
	assertShootMatches(t, rt, shoot)
	assertRuntimeCluster(t, rt)
}

// waitReadyAt waits until rt settles at generation, Ready or Failed, and fails the test at once
// with the Runtime's Ready condition when it failed (a refusal by Gardener, say).
func waitReadyAt(t *testing.T, rt *infrav1.Runtime, generation int64) *infrav1.Runtime {
	t.Helper()
	rt = waitForRuntime(t, rt, 2*time.Minute, fmt.Sprintf("Ready or Failed at generation %d", generation), func(rt *infrav1.Runtime) bool {
		return rt.Status.ObservedGeneration == generation && (rt.Status.State == infrav1.StateReady || rt.Status.State == infrav1.StateFailed)
	})
	if rt.Status.State != infrav1.StateReady {
		t.Fatalf("runtime %s is %s, want Ready: %+v", rt.Name, rt.Status.State, meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady))
	}
	return rt
}

// primaryDNSProvider returns the shoot's one DNS provider, failing the test without exactly one.
func primaryDNSProvider(t *testing.T, shoot *gardencorev1beta1.Shoot) gardencorev1beta1.DNSProvider {
	t.Helper()
	if shoot.Spec.DNS == nil || len(shoot.Spec.DNS.Providers) != 1 { //nolint:staticcheck // SA1019: the provider of the landscape's custom DNS.
		t.Fatalf("shoot dns = %+v, want one provider", shoot.Spec.DNS)
	}
	return shoot.Spec.DNS.Providers[0] //nolint:staticcheck // SA1019: as above.
}

// expectDNSProviderByCredentialsRef checks the DNS provider of a shoot from Kubernetes 1.35 on:
// it names the landscape's Secret by credentialsRef and has no secretName.
func expectDNSProviderByCredentialsRef(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	t.Helper()
	p := primaryDNSProvider(t, shoot)
	want := autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: dnsSecret}
	if p.CredentialsRef == nil || *p.CredentialsRef != want {
		t.Errorf("DNS provider credentialsRef = %+v, want %+v", p.CredentialsRef, want)
	}
	if p.SecretName != nil { //nolint:staticcheck // SA1019: the field Gardener forbids from 1.35 on, checked absent.
		t.Errorf("DNS provider secretName = %q, want none", *p.SecretName) //nolint:staticcheck // SA1019: as above.
	}
}

// dnsConfig is what these tests read of the shoot-dns-service providerConfig.
type dnsConfig struct {
	DNSProviderReplication *struct {
		Enabled bool `json:"enabled"`
	} `json:"dnsProviderReplication"`
	Providers                     []map[string]any `json:"providers"`
	SyncProvidersFromShootSpecDNS bool             `json:"syncProvidersFromShootSpecDNS"`
}

// dnsExtensionConfig decodes the shoot's shoot-dns-service providerConfig, failing the test
// without one.
func dnsExtensionConfig(t *testing.T, shoot *gardencorev1beta1.Shoot) dnsConfig {
	t.Helper()
	i := slices.IndexFunc(shoot.Spec.Extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == gardener.ExtensionDNS })
	if i < 0 || shoot.Spec.Extensions[i].ProviderConfig == nil {
		t.Fatalf("shoot has no %s extension with a providerConfig: %+v", gardener.ExtensionDNS, shoot.Spec.Extensions)
	}
	raw := shoot.Spec.Extensions[i].ProviderConfig.Raw
	var cfg dnsConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("decode %s providerConfig %s: %v", gardener.ExtensionDNS, raw, err)
	}
	return cfg
}

// dnsProviderOwners lists the field managers that own spec.dns.providers or any of it, as
// "manager (operation)", from the shoot's managedFields.
func dnsProviderOwners(t *testing.T, shoot *gardencorev1beta1.Shoot) []string {
	t.Helper()
	var out []string
	for _, mf := range shoot.ManagedFields {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatalf("decode managedFields of %s: %v", mf.Manager, err)
		}
		spec, _ := fields["f:spec"].(map[string]any)
		dns, _ := spec["f:dns"].(map[string]any)
		if _, ok := dns["f:providers"]; ok {
			out = append(out, fmt.Sprintf("%s (%s)", mf.Manager, mf.Operation))
		}
	}
	return out
}
