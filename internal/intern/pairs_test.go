package intern_test

import (
	"maps"
	"strconv"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

func TestPairsKeepAMap(t *testing.T) {
	for _, n := range []int{0, 1, 2, 9, 16} {
		m := map[string]string{}
		for i := range n {
			// Keys that sort otherwise as strings than as numbers, and an empty value.
			m["kyma-project.io/k"+strconv.Itoa(i*7)] = strconv.Itoa(i)
		}
		if n > 0 {
			m[""] = ""
		}
		p := intern.PairsOf(m)
		if got := p.Map(); !maps.Equal(got, m) || (len(m) == 0) != (got == nil) {
			t.Errorf("%d entries: the map of the pairs is %v, want %v", len(m), got, m)
		}
		for k, v := range m {
			if got, ok := p.Get(k); !ok || got != v {
				t.Errorf("%d entries: Get(%q) = %q, %v; want %q", len(m), k, got, ok, v)
			}
		}
		for _, absent := range []string{"kyma-project.io/k", "zzz", "kyma-project.io/k1x"} {
			if got, ok := p.Get(absent); ok {
				t.Errorf("%d entries: Get(%q) = %q, want nothing", len(m), absent, got)
			}
		}
	}
}
