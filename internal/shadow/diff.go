package shadow

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Change is one value a write changes: its path in the object, the value before (none: it is
// added) and after (none: it is removed).
type Change struct {
	Path string `json:"path"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
}

// volatile are the fields of metadata that the API server keeps and every write moves: they say
// nothing about what a write changes.
var volatile = []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink"}

// asMap returns v as JSON decodes it, so that values read and values written compare alike, with
// the values of a Secret redacted.
func asMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	redact(m)
	// The type identifies the object; a typed object answered by the client has it empty.
	delete(m, "apiVersion")
	delete(m, "kind")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, f := range volatile {
			delete(meta, f)
		}
	}
	return m, nil
}

// changes returns the values in which after differs from before, paths in key order. A list of
// another length changes as a whole.
func changes(before, after map[string]any) []Change {
	var out []Change
	walk(before, after, "", &out)
	return out
}

func walk(before, after any, path string, out *[]Change) {
	b, bok := before.(map[string]any)
	a, aok := after.(map[string]any)
	if bok && aok {
		keys := slices.Sorted(maps.Keys(a))
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			walk(b[k], a[k], path+"."+k, out)
		}
		return
	}
	bl, bok := before.([]any)
	al, aok := after.([]any)
	if bok && aok && len(bl) == len(al) {
		for i := range al {
			walk(bl[i], al[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
		return
	}
	if reflect.DeepEqual(before, after) {
		return
	}
	if path == "" {
		path = "."
	}
	*out = append(*out, Change{Path: path, Old: before, New: after})
}

// redact replaces each value of a Secret by a digest of it: a record tells a changed value from
// a kept one and shows neither, since a kubeconfig Secret's value is a credential. A Secret is
// told by its kind or, when the client answered a typed object without one, by its top-level
// type field, which a ConfigMap has not.
func redact(m map[string]any) {
	if m["kind"] != "Secret" && m["type"] == nil {
		return
	}
	for _, key := range []string{"data", "stringData"} {
		values, ok := m[key].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range values {
			s, _ := v.(string)
			sum := sha256.Sum256([]byte(s))
			values[k] = fmt.Sprintf("(redacted, sha256 %x)", sum[:6])
		}
	}
}
