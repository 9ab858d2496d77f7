package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
)

// watchScenario prints, every two seconds at most, what the simulator's rules did: the cause of
// the retries the progress lines show.
func (e *env) watchScenario(sim *gardensim.Simulator) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := localenv.NewScenarioWatcher()
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			e.print(w.Observe(ruleHits(sim.FaultRules(), sim.LifecycleRules())))
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	e.stack.AddQuiet("scenario watcher", func() error { cancel(); <-done; return nil })
}

// ruleHits reads the simulator's rule counters.
func ruleHits(faults []fault.RuleStatus, rules []lifecycle.RuleStatus) []localenv.RuleHits {
	var hits []localenv.RuleHits
	for _, f := range faults {
		effect := string(f.Fault.Type)
		switch {
		case len(f.Fault.Codes) > 0:
			effect += fmt.Sprintf(" %v", f.Fault.Codes)
		case f.Fault.Code != 0:
			effect += fmt.Sprintf(" %d", f.Fault.Code)
		}
		hits = append(hits, localenv.RuleHits{Kind: "fault", Name: f.Name, Effect: effect, Hits: f.Hits, Active: f.Active})
	}
	for _, r := range rules {
		ops := make([]string, 0, len(r.Operations))
		for _, op := range r.Operations {
			ops = append(ops, string(op))
		}
		effect := strings.Join(ops, ",") + " -> " + string(r.Outcome)
		if len(r.Codes) > 0 {
			effect += fmt.Sprintf(" %v", r.Codes)
		}
		hits = append(hits, localenv.RuleHits{Kind: "lifecycle", Name: r.Name, Effect: strings.TrimPrefix(effect, " -> "), Hits: r.Hits, Active: true})
	}
	return hits
}
