package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Annotations that decide whether a re-check writes.
const (
	// AnnotationAppliedHash on a garden object is the hash of what the controller last applied
	// to it. With the same hash and every applied value still in place, applying again would
	// change nothing, so a re-check does not write.
	AnnotationAppliedHash = "infrastructuremanager.kyma-project.io/applied-hash"
	// AnnotationRuntimeGeneration on a shoot is the Runtime generation it was last written for,
	// as upstream records it.
	AnnotationRuntimeGeneration = "infrastructuremanager.kyma-project.io/runtime-generation"
	// AnnotationSuspendPatch on a Runtime ("true") keeps the controller from writing its
	// existing shoot, as upstream defines it.
	AnnotationSuspendPatch = "operator.kyma-project.io/suspend-patch-reconciliation"
	// AnnotationForcePatch on a Runtime ("true") makes the controller write the shoot on every
	// pass even when nothing drifted, as upstream defines it.
	AnnotationForcePatch = "operator.kyma-project.io/force-patch-reconciliation"
)

// withAppliedHash sets the hash of the apply configuration ac on it, and returns it.
func withAppliedHash(ac *unstructured.Unstructured) (string, error) { return withHashOf(ac, ac) }

// withHashOf sets the hash of the apply configuration of (without its own hash) on ac, and
// returns it.
func withHashOf(ac, of *unstructured.Unstructured) (string, error) {
	plain := of.DeepCopy()
	annotations := plain.GetAnnotations()
	delete(annotations, AnnotationAppliedHash)
	plain.SetAnnotations(annotations)
	data, err := json.Marshal(plain.Object)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", of.GetName(), err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:16])
	annotations = ac.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationAppliedHash] = hash
	ac.SetAnnotations(annotations)
	return hash, nil
}

// upToDate reports whether applying ac to current would change nothing: current was last
// written with the same apply configuration and still holds every value of it.
func upToDate(ac *unstructured.Unstructured, current any) (bool, error) {
	if current == nil || reflect.ValueOf(current).IsNil() {
		return false, nil
	}
	d, err := drift(ac, current)
	return d == "", err
}

// drift returns the first path at which current does not hold a value of the apply
// configuration ac, "" when it holds them all.
func drift(ac *unstructured.Unstructured, current any) (string, error) {
	cur, want, err := comparable(ac, current)
	if err != nil {
		return "", err
	}
	return difference(cur, want, ""), nil
}

// toMap returns v as its JSON form decoded into a map.
func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return m, nil
}

// contains reports whether got holds every value of want: maps key by key, lists element by
// element with the same length, other values equal. What got has beyond want (defaults,
// other managers' fields, status) does not matter.
func contains(got, want any) bool { return difference(got, want, "") == "" }

// difference returns the first path (keys in order) at which got does not hold want's value,
// "" when it holds them all; see contains.
func difference(got, want any, path string) string {
	first := ""
	differences(got, want, path, func(p string, _, _ any) bool {
		first = p
		return false
	})
	return first
}

// differences calls found, keys in order, for each path at which got does not hold want's
// value, with the values there, until found returns false; it reports whether to go on. A list
// of another length differs as a whole.
func differences(got, want any, path string, found func(path string, got, want any) bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return found(orRoot(path), got, want)
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if !differences(g[k], w[k], path+"."+k, found) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return found(orRoot(path), got, want)
		}
		for i := range w {
			if !differences(g[i], w[i], fmt.Sprintf("%s[%d]", path, i), found) {
				return false
			}
		}
		return true
	default:
		if reflect.DeepEqual(got, want) {
			return true
		}
		return found(orRoot(path), got, want)
	}
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// patchSuspended and patchForced read upstream's annotations on a Runtime.
func patchSuspended(rt *infrav1.Runtime) bool {
	return rt.Annotations[AnnotationSuspendPatch] == "true"
}
func patchForced(rt *infrav1.Runtime) bool { return rt.Annotations[AnnotationForcePatch] == "true" }
