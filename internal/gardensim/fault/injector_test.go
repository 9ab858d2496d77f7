package fault

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	status500 = Fault{Type: TypeStatus, Code: 500}
	anyGet    = Request{Verb: "get", Resource: "shoots", Name: "s"}
)

func TestInjectorLimits(t *testing.T) {
	half := 0.5
	tests := []struct {
		name    string        // case name
		rule    Rule          // the only rule
		advance time.Duration // clock advance before each request
		want    string        // hit (x) or miss (.) for six requests
	}{
		{name: "always", rule: Rule{Fault: status500}, want: "xxxxxx"},
		{name: "first two", rule: Rule{Count: 2, Fault: status500}, want: "xx...."},
		{name: "never with probability zero", rule: Rule{Probability: new(float64), Fault: status500}, want: "......"},
		{
			name: "window from 2s to 4s", advance: time.Second,
			rule: Rule{After: &metav1.Duration{Duration: 2 * time.Second}, For: &metav1.Duration{Duration: 2 * time.Second}, Fault: status500},
			want: ".xx...",
		},
		{name: "seeded probability is reproducible", rule: Rule{Probability: &half, Fault: status500}, want: "x.xxxx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			inj := NewInjector(WithSeed(3), WithClock(clock))
			if err := inj.SetRules([]Rule{tc.rule}); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for range 6 {
				clock.SetTime(clock.Now().Add(tc.advance))
				if _, hit := inj.Decide(anyGet); hit {
					got.WriteString("x")
				} else {
					got.WriteString(".")
				}
			}
			if got.String() != tc.want {
				t.Errorf("hits = %s, want %s", got.String(), tc.want)
			}
		})
	}
}

func TestInjectorFirstMatchingRuleWins(t *testing.T) {
	inj := NewInjector()
	err := inj.SetRules([]Rule{
		{Name: "deletes", Match: Match{Verbs: []string{"delete"}}, Fault: status500},
		{Name: "gets", Match: Match{Verbs: []string{"get"}}, Fault: Fault{Type: TypeDrop}},
		{Name: "all", Fault: status500},
	})
	if err != nil {
		t.Fatal(err)
	}
	hit, ok := inj.Decide(anyGet)
	if !ok || hit.Rule != "gets" || hit.Fault.Type != TypeDrop {
		t.Fatalf("Decide = %+v, %v; want rule gets", hit, ok)
	}
	if hits := inj.Rules(); hits[0].Hits != 0 || hits[1].Hits != 1 || hits[2].Hits != 0 {
		t.Errorf("hit counts = %+v", hits)
	}
}

func TestRuleValidate(t *testing.T) {
	tooLikely := 1.5
	tests := []struct {
		name string // case name
		rule Rule   // the rule
		ok   bool   // whether it is valid
	}{
		{name: "status with code", rule: Rule{Fault: status500}, ok: true},
		{name: "status with codes", rule: Rule{Fault: Fault{Type: TypeStatus, Codes: []int{500, 503}}}, ok: true},
		{name: "status without code", rule: Rule{Fault: Fault{Type: TypeStatus}}},
		{name: "success code", rule: Rule{Fault: Fault{Type: TypeStatus, Code: 200}}},
		{name: "latency without delay", rule: Rule{Fault: Fault{Type: TypeLatency}}},
		{name: "unknown type", rule: Rule{Fault: Fault{Type: "Explode"}}},
		{name: "probability above one", rule: Rule{Probability: &tooLikely, Fault: status500}},
		{name: "bad glob", rule: Rule{Match: Match{Name: "["}, Fault: status500}},
		{name: "negative count", rule: Rule{Count: -1, Fault: status500}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.rule.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
