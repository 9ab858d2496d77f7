package localenv

import (
	"slices"
	"testing"
)

func TestScenarioWatcher(t *testing.T) {
	t.Parallel()
	// read is one reading of the rules and the lines it must print.
	type read struct {
		// rules are the counters read.
		rules []RuleHits
		// want are the expected lines.
		want []string
	}
	fault := func(hits int, active bool) RuleHits {
		return RuleHits{Kind: "fault", Name: "gardener-down", Effect: "Status 503", Hits: hits, Active: active}
	}
	quota := func(hits int) RuleHits {
		return RuleHits{Kind: "lifecycle", Name: "quota", Effect: "Create -> Failed", Hits: hits, Active: true}
	}
	tests := []struct {
		// name describes the case.
		name string
		// reads are the readings in order.
		reads []read
	}{
		{
			name: "a fault rule becomes active, hits, becomes inactive",
			reads: []read{
				{rules: []RuleHits{fault(0, false)}, want: nil},
				{rules: []RuleHits{fault(0, true)}, want: []string{"SIMULATOR fault rule gardener-down (Status 503): active"}},
				{rules: []RuleHits{fault(4, true)}, want: []string{"SIMULATOR fault rule gardener-down (Status 503) hit 4 more requests, 4 so far"}},
				{rules: []RuleHits{fault(4, true)}, want: nil},
				{rules: []RuleHits{fault(5, false)}, want: []string{
					"SIMULATOR fault rule gardener-down (Status 503): inactive",
					"SIMULATOR fault rule gardener-down (Status 503) hit 1 more requests, 5 so far",
				}},
			},
		},
		{
			name: "lifecycle rules print their hits only; a first reading with hits prints them",
			reads: []read{
				{rules: []RuleHits{quota(1)}, want: []string{"SIMULATOR lifecycle rule quota (Create -> Failed) hit 1 more shoot operations, 1 so far"}},
				{rules: []RuleHits{quota(1)}, want: nil},
				{rules: []RuleHits{quota(3)}, want: []string{"SIMULATOR lifecycle rule quota (Create -> Failed) hit 2 more shoot operations, 3 so far"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := NewScenarioWatcher()
			for i, r := range tc.reads {
				if got := w.Observe(r.rules); !slices.Equal(got, r.want) {
					t.Errorf("read %d: got %q, want %q", i, got, r.want)
				}
			}
		})
	}
}
