package landscape

import (
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

	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// upstreamShoot lays out the shoot of a Runtime as upstream's converter writes it and Gardener
// stores it, from the manager's own render of a new shoot: upstream labels a shoot with account
// and subaccount only, lists the DNS and certificate extensions first, and Gardener adds the
// credentialsRef of a DNS provider named by secretName.
func upstreamShoot(s *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	out := s.DeepCopy()
	out.Labels = map[string]string{gardener.LabelAccount: s.Labels[gardener.LabelAccount], gardener.LabelSubaccount: s.Labels[gardener.LabelSubaccount]}
	first := []string{gardener.ExtensionDNS, gardener.ExtensionCert}
	slices.SortStableFunc(out.Spec.Extensions, func(a, b gardencorev1beta1.Extension) int {
		rank := func(e gardencorev1beta1.Extension) int {
			if i := slices.Index(first, e.Type); i >= 0 {
				return i
			}
			return len(first)
		}
		return rank(a) - rank(b)
	})
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

// TestAdoptUpstreamShoots takes over twenty shoots laid out as upstream lays them out, and
// counts the leaves the manager's apply changes on each: only labels may change.
func TestAdoptUpstreamShoots(t *testing.T) {
	opts := realistic(t)
	files := testenv.RuntimeFiles(t)
	for i := range 20 {
		file := files[i%len(files)]
		t.Run(fmt.Sprintf("%02d-%s", i, filepath.Base(file)), func(t *testing.T) {
			rt := readRuntime(t, file)
			if i >= len(files) {
				rt.Spec.Shoot.Purpose = "evaluation"
			}
			live := upstreamShoot(render(t, rt, opts))
			r, err := gardener.Render(rt, live, opts)
			if err != nil {
				t.Fatal(err)
			}
			changed := changedLeaves(t, r.Shoot, live)
			t.Logf("%d leaves changed: %s", len(changed), strings.Join(changed, ", "))
			for _, leaf := range changed {
				if !strings.HasPrefix(leaf, "metadata.labels.") {
					t.Errorf("taking over changes %s", leaf)
				}
			}
		})
	}
}

// changedLeaves lists the leaves of want (what the manager applies) that live lacks or holds
// with another value.
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
