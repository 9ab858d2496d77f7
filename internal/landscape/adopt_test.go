package landscape

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// upstreamExtensionOrder is the order in which upstream's converter lists the extensions of a
// new shoot (its extensions extender for create: networking filter, certificates, DNS, OIDC,
// audit log, registry cache); the ones it adds elsewhere follow.
var upstreamExtensionOrder = []string{
	gardener.ExtensionNetworkingFilter, gardener.ExtensionCert, gardener.ExtensionDNS,
	gardener.ExtensionOIDCService, gardener.ExtensionAuditLog, gardener.ExtensionRegistryCache,
}

// upstreamShoot lays out the shoot of a Runtime as upstream's converter writes it and Gardener
// stores it, read from upstream's source (pkg/gardener/shoot/extender), starting from the
// manager's own render of a new shoot for what both write alike:
//   - labels: account and subaccount only;
//   - extensions in upstream's order (upstreamExtensionOrder);
//   - the networking filter with a providerConfig only when the ingress filter is on, then
//     without apiVersion and kind (NewNetworkFilterExtension);
//   - the DNS extension's providerConfig in upstream's form: dnsProviderReplication on, the
//     provider's secret as secretName, syncProvidersFromShootSpecDNS (newDNSExtensionConfig);
//   - the DNS provider of spec.dns with the credentialsRef Gardener adds to a secretName.
func upstreamShoot(t *testing.T, rt *infrav1.Runtime, s *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	t.Helper()
	out := s.DeepCopy()
	out.Labels = map[string]string{gardener.LabelAccount: s.Labels[gardener.LabelAccount], gardener.LabelSubaccount: s.Labels[gardener.LabelSubaccount]}
	slices.SortStableFunc(out.Spec.Extensions, func(a, b gardencorev1beta1.Extension) int {
		rank := func(e gardencorev1beta1.Extension) int {
			if i := slices.Index(upstreamExtensionOrder, e.Type); i >= 0 {
				return i
			}
			return len(upstreamExtensionOrder)
		}
		return rank(a) - rank(b)
	})
	for i := range out.Spec.Extensions {
		e := &out.Spec.Extensions[i]
		switch e.Type {
		case gardener.ExtensionNetworkingFilter:
			e.ProviderConfig = nil
			if f := rt.Spec.Security.Networking.Filter; f.Ingress != nil && f.Ingress.Enabled {
				e.ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"egressFilter":{"blackholingEnabled":true}}`)}
			}
		case gardener.ExtensionDNS:
			e.ProviderConfig = upstreamDNSConfig(t, e.ProviderConfig)
		}
	}
	if out.Spec.DNS != nil {
		for i := range out.Spec.DNS.Providers { //nolint:staticcheck // SA1019: the provider Gardener syncs.
			p := &out.Spec.DNS.Providers[i]                                   //nolint:staticcheck // SA1019: as above.
			if name := p.SecretName; name != nil && p.CredentialsRef == nil { //nolint:staticcheck // SA1019: as above.
				p.CredentialsRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: *name}
			}
		}
	}
	return out
}

// upstreamDNSConfig rewrites the manager's DNS providerConfig in upstream's form.
func upstreamDNSConfig(t *testing.T, ours *runtime.RawExtension) *runtime.RawExtension {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(ours.Raw, &cfg); err != nil {
		t.Fatal(err)
	}
	providers, _ := cfg["providers"].([]any)
	if len(providers) == 0 {
		// Gardener's internal DNS: upstream writes only the synchronisation.
		return rawJSON(t, map[string]any{"apiVersion": cfg["apiVersion"], "kind": cfg["kind"], "syncProvidersFromShootSpecDNS": true})
	}
	for _, p := range providers {
		p := p.(map[string]any)
		if c, ok := p["credentials"]; ok {
			p["secretName"] = c
			delete(p, "credentials")
		}
	}
	cfg["dnsProviderReplication"] = map[string]any{"enabled": true}
	cfg["syncProvidersFromShootSpecDNS"] = true
	return rawJSON(t, cfg)
}

func rawJSON(t *testing.T, v any) *runtime.RawExtension {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: data}
}

// TestAdoptUpstreamShoots takes over twenty shoots laid out as upstream lays them out, and
// counts the leaves the manager's apply changes on each: only labels may change.
func TestAdoptUpstreamShoots(t *testing.T) {
	opts := realistic(t)
	files := testenv.RuntimeFiles(t)
	specChanged := 0
	defer func() { t.Logf("shoots whose spec the takeover changes: %d of 20", specChanged) }()
	for i := range 20 {
		file := files[i%len(files)]
		t.Run(fmt.Sprintf("%02d-%s", i, filepath.Base(file)), func(t *testing.T) {
			rt := readRuntime(t, file)
			if i >= len(files) {
				rt.Spec.Shoot.Purpose = "evaluation"
			}
			live := upstreamShoot(t, rt, render(t, rt, opts))
			r, err := gardener.Render(rt, live, opts)
			if err != nil {
				t.Fatal(err)
			}
			changed := changedLeaves(t, r.Shoot, live)
			t.Logf("%d leaves changed: %s", len(changed), strings.Join(changed, ", "))
			spec := false
			for _, leaf := range changed {
				if !strings.HasPrefix(leaf, "metadata.labels.") {
					t.Errorf("taking over changes %s", leaf)
				}
				spec = spec || strings.HasPrefix(leaf, "spec.")
			}
			if spec {
				specChanged++
			}
		})
	}
}

// changedLeaves lists the leaves of want (what the manager applies) that live lacks or holds
// with another value, and the leaves of a live providerConfig that want lacks.
func changedLeaves(t *testing.T, want, live *gardencorev1beta1.Shoot) []string {
	t.Helper()
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		t.Fatal(err)
	}
	l, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		t.Fatal(err)
	}
	wl, ll := map[string]any{}, map[string]any{}
	flatten("", w, wl)
	flatten("", l, ll)
	var out []string
	for path, v := range wl {
		if lv, ok := ll[path]; !ok || !reflect.DeepEqual(v, lv) {
			out = append(out, path)
		}
	}
	// A providerConfig is applied whole: a leaf of the live one that the applied one lacks is
	// removed.
	for path := range ll {
		if _, ok := wl[path]; !ok && strings.Contains(path, ".providerConfig.") {
			out = append(out, path+" (removed)")
		}
	}
	sort.Strings(out)
	return out
}

// flatten records every leaf of v under its dotted path; a providerConfig is a leaf.
func flatten(path string, v any, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = x
		}
		for k, c := range x {
			flatten(strings.TrimPrefix(path+"."+k, "."), c, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = x
		}
		for i, c := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), c, out)
		}
	default:
		out[path] = v
	}
}
