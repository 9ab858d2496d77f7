package intern

import (
	"maps"
	"slices"
	"sort"
)

// Pairs is a map of strings kept as key, value, key, value, ... sorted by key. A Go map of more
// than eight entries takes more than twice the memory of its entries in a slice, and the
// objects of a fleet carry ten to fifteen labels each: a cache that keeps them as Pairs and
// builds a map for each reader holds about half as much.
type Pairs []string

// PairsOf returns the entries of m as Pairs; nil when m is empty.
func PairsOf(m map[string]string) Pairs {
	if len(m) == 0 {
		return nil
	}
	out := make(Pairs, 0, 2*len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k, m[k])
	}
	return out
}

// Map returns a new map of p's entries; nil when p has none.
func (p Pairs) Map() map[string]string {
	if len(p) == 0 {
		return nil
	}
	out := make(map[string]string, len(p)/2)
	for i := 0; i+1 < len(p); i += 2 {
		out[p[i]] = p[i+1]
	}
	return out
}

// Get returns the value of key and whether p holds it.
func (p Pairs) Get(key string) (string, bool) {
	n := len(p) / 2
	i := sort.Search(n, func(i int) bool { return p[2*i] >= key })
	if i < n && p[2*i] == key {
		return p[2*i+1], true
	}
	return "", false
}
