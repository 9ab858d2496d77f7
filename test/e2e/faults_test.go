package e2e_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// setFaults replaces the simulator's fault rules through its admin API (PUT /rules), the way an
// operator or a chaos tool drives a running simulator: every Gardener call the manager makes
// from then on is matched against them. Replacing the rules restarts their hit counters, so a
// scenario sets all of its rules at once; scenarios run one after the other, and each clears
// its rules when it ends (clearFaults).
func setFaults(t *testing.T, rules ...fault.Rule) {
	t.Helper()
	if err := sendJSON(t.Context(), http.MethodPut, sys.sim.AdminURL()+"/rules", rules, nil); err != nil {
		t.Fatalf("set fault rules: %v", err)
	}
}

// clearFaults removes every fault rule (DELETE /rules): the simulator answers as Gardener again.
// It takes no *testing.T, so cleanups can call it after the test's context has ended.
func clearFaults(ctx context.Context) error {
	return sendJSON(ctx, http.MethodDelete, sys.sim.AdminURL()+"/rules", nil, nil)
}

// faultHits returns how many requests each installed fault rule has hit, by rule name.
func faultHits(t *testing.T) map[string]int {
	t.Helper()
	var rules []fault.RuleStatus
	if err := getJSON(t.Context(), sys.sim.AdminURL()+"/rules", &rules); err != nil {
		t.Fatalf("read fault rules: %v", err)
	}
	hits := make(map[string]int, len(rules))
	for _, r := range rules {
		hits[r.Name] = r.Hits
	}
	return hits
}
