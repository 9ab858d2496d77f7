package gardener

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// A shoot the manager takes over (upstream's, or its own from an earlier version) changes only
// where the Runtime asks for something different from what the shoot has. The functions here
// keep what the render would otherwise rewrite without a reason: the order of the shoot's
// extensions and resources, and the parts of an extension's providerConfig the manager does
// not set.

// adoptExtensions orders the rendered extensions as the live shoot lists them, new ones last
// in the render's order, and merges each providerConfig with the live one (adoptConfig), so a
// shoot that already has what the Runtime asks for keeps its spec as it is.
func (b *shootBuilder) adoptExtensions(out []gardencorev1beta1.Extension) ([]gardencorev1beta1.Extension, error) {
	if b.current == nil {
		return out, nil
	}
	live := b.current.Spec.Extensions
	for i := range out {
		j := slices.IndexFunc(live, func(e gardencorev1beta1.Extension) bool { return e.Type == out[i].Type })
		if j < 0 {
			continue
		}
		out[i].ProviderConfig = adoptConfig(out[i], live[j])
	}
	return orderLike(out, live, func(e gardencorev1beta1.Extension) string { return e.Type }), nil
}

// adoptConfig is the providerConfig the manager applies to an extension the live shoot already
// lists:
//   - for an extension disabled in both, the live one, whatever it holds: it configures
//     nothing (upstream gives a disabled networking filter none, the manager its defaults);
//   - for the DNS extension, the two merged by mergeDNSConfig;
//   - for any other, the two merged by mergeConfig.
func adoptConfig(rendered, live gardencorev1beta1.Extension) *runtime.RawExtension {
	switch {
	case ptr.Deref(rendered.Disabled, false) && ptr.Deref(live.Disabled, false):
		return live.ProviderConfig
	case rendered.Type == ExtensionDNS:
		return mergeDNSConfig(live.ProviderConfig, rendered.ProviderConfig)
	default:
		return mergeConfig(live.ProviderConfig, rendered.ProviderConfig)
	}
}

// mergeConfig merges a providerConfig the manager renders into the live one, object by object:
// the live one's fields stay (a networking filter's staticFilterList, say), the manager's own
// fields win where they say something else. A live config that
// already holds every value the manager's holds is kept as it is, and so is one that lacks only
// the manager's apiVersion and kind (upstream writes some configs without them, and the
// extension reads them the same). A live providerConfig that is not a JSON object is replaced.
func mergeConfig(live, rendered *runtime.RawExtension) *runtime.RawExtension {
	if live == nil || len(live.Raw) == 0 || rendered == nil {
		return rendered
	}
	var base, ours map[string]any
	if json.Unmarshal(live.Raw, &base) != nil || base == nil || json.Unmarshal(rendered.Raw, &ours) != nil {
		return rendered
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if _, ok := base[k]; !ok {
			delete(ours, k)
		}
	}
	merged := mergeObjects(base, ours)
	if reflect.DeepEqual(merged, base) {
		return live
	}
	if reflect.DeepEqual(merged, ours) {
		return rendered
	}
	return rawJSON(merged)
}

// mergeObjects returns base with ours merged in, object by object: a value of ours replaces
// base's, except that two objects are merged in turn. Neither argument is changed.
func mergeObjects(base, ours map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range ours {
		b, bok := base[k].(map[string]any)
		o, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeObjects(b, o)
			continue
		}
		out[k] = v
	}
	return out
}

// orderLike returns items in the order live holds them, by key; items live lacks follow in
// their own order.
func orderLike[T any](items, live []T, key func(T) string) []T {
	if len(live) == 0 || len(items) < 2 {
		return items
	}
	rank := func(item T) int {
		if i := slices.IndexFunc(live, func(l T) bool { return key(l) == key(item) }); i >= 0 {
			return i
		}
		return len(live)
	}
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return rank(a) - rank(b) })
	return out
}

// mergeDNSConfig merges the DNS extension's providerConfig the manager renders into the one
// the live shoot holds: the live one's fields stay (dnsProviderReplication, say, which
// upstream sets and the manager would otherwise drop), the manager's own fields win. The
// providers stay the live ones while the extension synchronises them from spec.dns: its
// mutating webhook rewrote them, and rewrites them again after every write. A live
// providerConfig that is not a JSON object is replaced.
func mergeDNSConfig(live, rendered *runtime.RawExtension) *runtime.RawExtension {
	if live == nil || len(live.Raw) == 0 || rendered == nil {
		return rendered
	}
	var base, ours map[string]any
	if json.Unmarshal(live.Raw, &base) != nil || base == nil || json.Unmarshal(rendered.Raw, &ours) != nil {
		return rendered
	}
	_, liveProviders := base["providers"]
	for k, v := range ours {
		if k == "providers" && liveProviders && ours["syncProvidersFromShootSpecDNS"] == true {
			continue
		}
		base[k] = v
	}
	if reflect.DeepEqual(base, ours) {
		// Nothing to keep: the render's own bytes, so a render is stable on its own shoot.
		return rendered
	}
	return rawJSON(base)
}
