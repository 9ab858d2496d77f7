package chance

import (
	"math/rand/v2"
	"sync"
)

// Source draws pseudo-random numbers from a fixed seed; it is safe for
// concurrent use.
type Source struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// New returns a Source seeded with seed.
func New(seed uint64) *Source {
	return &Source{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Hit reports whether an event of probability p happens; nil means certain.
func (s *Source) Hit(p *float64) bool {
	if p == nil || *p >= 1 {
		return true
	}
	if *p <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < *p
}

// Pick returns one of n choices, uniformly.
func (s *Source) Pick(n int) int {
	if n <= 1 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.IntN(n)
}
