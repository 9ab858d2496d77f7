package shadow

import (
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

// asMap returns v as JSON decodes it, so that values read and values written compare alike.
func asMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
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
