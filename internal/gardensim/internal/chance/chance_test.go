package chance

import "testing"

func TestHit(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string   // case name
		p       *float64 // probability
		minHits int      // lower bound of hits in 1000 draws
		maxHits int      // upper bound of hits in 1000 draws
	}{
		{name: "nil is certain", p: nil, minHits: 1000, maxHits: 1000},
		{name: "one is certain", p: p(1), minHits: 1000, maxHits: 1000},
		{name: "zero never", p: p(0), minHits: 0, maxHits: 0},
		{name: "ten percent", p: p(0.1), minHits: 60, maxHits: 140},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(42)
			hits := 0
			for range 1000 {
				if s.Hit(tc.p) {
					hits++
				}
			}
			if hits < tc.minHits || hits > tc.maxHits {
				t.Errorf("hits = %d, want in [%d, %d]", hits, tc.minHits, tc.maxHits)
			}
		})
	}
}

func TestSameSeedSameSequence(t *testing.T) {
	a, b := New(7), New(7)
	for i := range 100 {
		if a.Pick(10) != b.Pick(10) {
			t.Fatalf("draw %d differs between equal seeds", i)
		}
	}
}
