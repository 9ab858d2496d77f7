package landscape

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv/upstream"
)

// TestAdoptUpstreamShoots takes over twenty shoots laid out as upstream's converter writes them
// (upstream.Shoot), and counts the leaves the manager's apply changes on each: only labels may
// change, and the number of shoots whose spec changes is logged (it must be 0).
func TestAdoptUpstreamShoots(t *testing.T) {
	opts := realistic(t)
	files := testenv.RuntimeFiles(t)
	specChanged := 0
	defer func() { t.Logf("shoots whose spec the takeover changes: %d of 20", specChanged) }()
	for i := range 20 {
		file := files[i%len(files)]
		t.Run(fmt.Sprintf("%02d-%s", i, filepath.Base(file)), func(t *testing.T) {
			rt := testenv.ReadRuntime(t, file)
			if i >= len(files) {
				rt.Spec.Shoot.Purpose = "evaluation"
			}
			live, err := upstream.Shoot(rt, render(t, rt, opts))
			if err != nil {
				t.Fatal(err)
			}
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
