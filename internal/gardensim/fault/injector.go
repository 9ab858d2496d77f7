package fault

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/chance"
)

// Injector holds the fault rules and decides, request by request, which
// fault (if any) applies. Rules are tried in order and the first that fires
// wins. It is safe for concurrent use; SetRules replaces the rules at once
// and restarts their clocks and counters.
type Injector struct {
	clock  clock.PassiveClock
	chance *chance.Source

	mu    sync.Mutex
	rules []*ruleState
	setAt time.Time
}

type ruleState struct {
	Rule
	hits int
}

// Option configures an Injector.
type Option func(*Injector)

// WithSeed makes the injector's random choices reproducible.
func WithSeed(seed uint64) Option {
	return func(i *Injector) { i.chance = chance.New(seed) }
}

// WithClock sets the clock that bounds rules in time.
func WithClock(c clock.PassiveClock) Option {
	return func(i *Injector) { i.clock = c }
}

// NewInjector returns an Injector without rules.
func NewInjector(opts ...Option) *Injector {
	i := &Injector{clock: clock.RealClock{}, chance: chance.New(1)}
	for _, o := range opts {
		o(i)
	}
	i.setAt = i.clock.Now()
	return i
}

// Hit is a fault decided for one request.
type Hit struct {
	// Rule is the name of the rule that fired.
	Rule string
	// Fault is the fault to inject.
	Fault Fault
	// Code is the status code chosen for a Status fault.
	Code int
}

// RuleStatus is a rule as reported by the admin API.
type RuleStatus struct {
	Rule `json:",inline"`
	// Hits counts the requests the rule has hit since it was set.
	Hits int `json:"hits"`
	// Active tells whether the rule is within its time window and count.
	Active bool `json:"active"`
}

// SetRules validates and installs rules, replacing all previous ones.
func (i *Injector) SetRules(rules []Rule) error {
	states := make([]*ruleState, 0, len(rules))
	for n, r := range rules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("fault rule %d: %w", n, err)
		}
		states = append(states, &ruleState{Rule: r})
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rules = states
	i.setAt = i.clock.Now()
	return nil
}

// Rules returns the installed rules with their hit counts.
func (i *Injector) Rules() []RuleStatus {
	i.mu.Lock()
	defer i.mu.Unlock()
	now := i.clock.Now()
	out := make([]RuleStatus, 0, len(i.rules))
	for _, r := range i.rules {
		out = append(out, RuleStatus{Rule: r.Rule, Hits: r.hits, Active: i.active(r, now)})
	}
	return out
}

// Decide returns the fault for req, if a rule fires.
func (i *Injector) Decide(req Request) (Hit, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	now := i.clock.Now()
	for _, r := range i.rules {
		if !i.active(r, now) || !r.Match.Matches(req) || !i.chance.Hit(r.Probability) {
			continue
		}
		r.hits++
		hit := Hit{Rule: r.Name, Fault: r.Fault}
		if codes := r.Fault.codes(); len(codes) > 0 {
			hit.Code = codes[i.chance.Pick(len(codes))]
		}
		return hit, true
	}
	return Hit{}, false
}

// active reports whether r may still fire at now.
func (i *Injector) active(r *ruleState, now time.Time) bool {
	if r.Count > 0 && r.hits >= r.Count {
		return false
	}
	start := i.setAt
	if r.After != nil {
		start = start.Add(r.After.Duration)
	}
	if now.Before(start) {
		return false
	}
	return r.For == nil || now.Before(start.Add(r.For.Duration))
}
