package localenv

import (
	"fmt"
	"sync"
)

// RuleHits is what the simulator reports of one of its rules.
type RuleHits struct {
	// Kind is "fault" (a rule of the Gardener API proxy) or "lifecycle" (a rule of shoot
	// operations).
	Kind string
	// Name of the rule.
	Name string
	// Effect says in a few words what a hit does, e.g. "Status 503" or "Create -> Failed".
	Effect string
	// Hits counts the requests or operations the rule has hit.
	Hits int
	// Active tells whether a fault rule is within its time window; lifecycle rules are always
	// active.
	Active bool
}

// ScenarioWatcher turns the simulator's rule counters, read now and then, into lines: when a
// rule hits again and when a fault rule becomes active or inactive (its time window, its count). The scenario's effect on the
// runtimes shows in their progress; these lines show its cause. It is safe for concurrent use.
type ScenarioWatcher struct {
	mu   sync.Mutex
	last map[string]RuleHits
}

// NewScenarioWatcher returns a watcher that has seen no rule.
func NewScenarioWatcher() *ScenarioWatcher { return &ScenarioWatcher{last: map[string]RuleHits{}} }

// Observe returns the lines for what changed since the previous call. The first sight of a rule
// prints only if it has hits or an open window.
func (w *ScenarioWatcher) Observe(rules []RuleHits) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lines []string
	for _, r := range rules {
		key := r.Kind + "/" + r.Name
		prev, seen := w.last[key]
		w.last[key] = r
		if !seen {
			prev = RuleHits{Active: r.Kind != "fault"}
		}
		if r.Active != prev.Active {
			state := "inactive"
			if r.Active {
				state = "active"
			}
			lines = append(lines, fmt.Sprintf("SIMULATOR %s rule %s (%s): %s", r.Kind, r.Name, r.Effect, state))
		}
		if r.Hits > prev.Hits {
			unit := "requests"
			if r.Kind == "lifecycle" {
				unit = "shoot operations"
			}
			lines = append(lines, fmt.Sprintf("SIMULATOR %s rule %s (%s) hit %d more %s, %d so far",
				r.Kind, r.Name, r.Effect, r.Hits-prev.Hits, unit, r.Hits))
		}
	}
	return lines
}
