package lifecycle

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

func TestRulesDecide(t *testing.T) {
	quota := Rule{
		Name: "quota", Shoot: "*quota*", Operations: []gardencorev1beta1.LastOperationType{create},
		Outcome: OutcomeFailed, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded},
	}
	perShoot := quota
	perShoot.Count, perShoot.PerShoot = 1, true
	global := quota
	global.Count = 1
	type call struct {
		shoot string                              // shoot name
		op    gardencorev1beta1.LastOperationType // operation
		want  Outcome                             // verdict
	}
	tests := []struct {
		name  string // case name
		rule  Rule   // the only rule
		calls []call // decisions in order
	}{
		{
			name: "pattern and operation select",
			rule: quota,
			calls: []call{
				{shoot: "a-quota-shoot", op: create, want: OutcomeFailed},
				{shoot: "a-quota-shoot", op: deletion, want: OutcomeSucceeded},
				{shoot: "plain", op: create, want: OutcomeSucceeded},
			},
		},
		{
			name: "count across shoots",
			rule: global,
			calls: []call{
				{shoot: "quota-1", op: create, want: OutcomeFailed},
				{shoot: "quota-2", op: create, want: OutcomeSucceeded},
			},
		},
		{
			name: "count per shoot",
			rule: perShoot,
			calls: []call{
				{shoot: "quota-1", op: create, want: OutcomeFailed},
				{shoot: "quota-2", op: create, want: OutcomeFailed},
				{shoot: "quota-1", op: create, want: OutcomeSucceeded},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := NewRules(1)
			if err := rs.Set([]Rule{tc.rule}); err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.calls {
				if got := rs.Decide("garden-p", c.shoot, c.op); got.Outcome != c.want {
					t.Errorf("call %d (%s %s) = %s, want %s", i, c.op, c.shoot, got.Outcome, c.want)
				}
			}
		})
	}
}

func TestRuleValidate(t *testing.T) {
	tests := []struct {
		name string // case name
		rule Rule   // the rule
		ok   bool   // whether it is valid
	}{
		{name: "plain failure", rule: Rule{Outcome: OutcomeFailed, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}}, ok: true},
		{name: "unknown outcome", rule: Rule{Outcome: "Exploded"}},
		{name: "unknown code", rule: Rule{Outcome: OutcomeFailed, Codes: []gardencorev1beta1.ErrorCode{"ERR_BANANA"}}},
		{name: "unsupported operation", rule: Rule{Outcome: OutcomeFailed, Operations: []gardencorev1beta1.LastOperationType{"Migrate"}}},
		{name: "progress out of range", rule: Rule{Outcome: OutcomeHang, Progress: 100}},
		{name: "bad pattern", rule: Rule{Outcome: OutcomeHang, Shoot: "["}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.rule.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
