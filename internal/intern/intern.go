// Package intern shares the strings that the objects of a fleet repeat.
//
// A cache of 5,000 Runtimes holds 5,000 copies of each label key, machine type, region and
// condition reason: the decoder allocates every string afresh. Interning keeps one copy of each
// and lets every object point at it. The strings stay the same, so no reader can tell.
//
// Interning a string that no other object holds costs memory: the table keeps an entry for it,
// about 70 bytes. So only strings that repeat are worth it: label and annotation keys, the
// names and ids a runtime's objects carry each several times (Meta), the settings of a spec
// (Strings), and the messages of conditions that name no object (Conditions). Hashes are not.
//
// The package also keeps the labels and annotations of cached objects in less memory than Go
// maps take (Pairs), for the stored forms the caches keep objects in (StoredMeta).
package intern

import (
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	stdstrings "strings"
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// String returns the shared copy of s.
func String(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// shared returns m with its keys shared, and its values no longer than valueMax bytes, in a
// map of its size.
func shared(m map[string]string, valueMax int) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) <= valueMax {
			v = String(v)
		}
		out[String(k)] = v
	}
	return out
}

// labelValueMax is the longest a label value may be.
const labelValueMax = 63

// Meta shares the namespace, the name, the label keys and values and the annotation keys of
// obj, and the annotation values no longer than a label value. A runtime's objects repeat its
// ids: a Runtime is named after its runtime id, which its labels, its GardenerCluster's name
// and labels and its shoot's labels and annotations carry again, and the shoot's name is a
// label of the Runtime and part of its spec. Shared, they are held once per runtime instead of
// about ten times. Longer annotation values (a description, a configuration) seldom repeat.
func Meta(obj metav1.Object) {
	obj.SetNamespace(String(obj.GetNamespace()))
	obj.SetName(String(obj.GetName()))
	if l := obj.GetLabels(); len(l) > 0 {
		obj.SetLabels(shared(l, labelValueMax))
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		obj.SetAnnotations(shared(a, labelValueMax))
	}
}

// Strings shares every string that ptr reaches: fields, elements of slices and arrays, and
// the keys and values of maps with string keys. ptr is a pointer, usually to a spec, whose
// strings are settings that repeat across a fleet. Byte slices (raw JSON) and unexported
// fields are left as they are.
func Strings(ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	strings(v.Elem())
}

// strings shares the strings of v, which is settable or holds only settable parts.
func strings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() && v.Len() > 0 {
			v.SetString(String(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			strings(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				strings(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			strings(v.Index(i))
		}
	case reflect.Map:
		sharedMap(v)
	}
}

// sharedMap shares the keys of a map with string keys, and its values when they are strings.
// A Go map keeps the key it was last assigned with, so the keys are set anew.
func sharedMap(v reflect.Value) {
	kt, vt := v.Type().Key(), v.Type().Elem()
	if v.IsNil() || kt.Kind() != reflect.String {
		return
	}
	keys := v.MapKeys()
	for _, k := range keys {
		val := v.MapIndex(k)
		if vt.Kind() == reflect.String {
			val = reflect.ValueOf(String(val.String())).Convert(vt)
		}
		v.SetMapIndex(reflect.ValueOf(String(k.String())).Convert(kt), val)
	}
}

// Conditions returns conds in a slice of their length (a decoder grows one by doubling), with
// the type, status and reason of each shared: a fleet has a handful of each. A message is shared
// too unless it holds one of names, the object's own names (its name, its shoot's): a message
// that names them is the object's alone, while the others, such as "All steps succeeded", repeat
// across the fleet.
func Conditions(conds []metav1.Condition, names ...string) []metav1.Condition {
	if len(conds) == 0 {
		return conds
	}
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		c.Type, c.Reason = String(c.Type), String(c.Reason)
		c.Status = metav1.ConditionStatus(String(string(c.Status)))
		if !namesAny(c.Message, names) {
			c.Message = String(c.Message)
		}
		out[i] = c
	}
	return out
}

// namesAny reports whether s holds one of names.
func namesAny(s string, names []string) bool {
	for _, n := range names {
		if n != "" && stdstrings.Contains(s, n) {
			return true
		}
	}
	return false
}

// Map returns a map with the contents of m that other callers may hold too: the first map
// passed with these contents, while the table remembers it, or else m itself. A Go map costs
// about 300 bytes even with one entry, so objects whose small maps repeat (the garden
// ConfigMaps of Runtimes with the same OIDC configuration: their data and their annotation)
// share one. The maps returned must only be read: every holder sees a write. The informers'
// objects are such: a read through the cache gets a copy.
//
// The table keeps up to mapTableSize maps and starts afresh when it is full, so maps that do not
// repeat cost a slot for a while and nothing after.
func Map(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	h := mapHash(m)
	mapTable.mu.Lock()
	defer mapTable.mu.Unlock()
	if held, ok := mapTable.m[h]; ok && maps.Equal(held, m) {
		return held
	}
	if len(mapTable.m) >= mapTableSize {
		clear(mapTable.m)
	}
	mapTable.m[h] = m
	return m
}

// mapTableSize bounds the maps that Map remembers.
const mapTableSize = 1024

var mapTable = struct {
	mu sync.Mutex
	m  map[uint64]map[string]string
}{m: map[uint64]map[string]string{}}

var mapSeed = maphash.MakeSeed()

// mapHash hashes the entries of m in key order. Two maps may share a hash: Map compares them
// before it shares one.
func mapHash(m map[string]string) uint64 {
	var h maphash.Hash
	h.SetSeed(mapSeed)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		h.WriteString(k)
		_ = h.WriteByte(0)
		h.WriteString(m[k])
		_ = h.WriteByte(0)
	}
	return h.Sum64()
}
