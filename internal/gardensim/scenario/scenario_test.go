package scenario

import (
	"errors"
	"testing"
	"time"
)

func TestShippedScenariosParse(t *testing.T) {
	want := []string{"flaky", "healthy", "outage", "quota-exceeded", "seed-region-down", "stuck"}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Scenario{}
	for _, s := range all {
		if s.Description == "" {
			t.Errorf("scenario %s has no description", s.Name)
		}
		byName[s.Name] = s
	}
	for _, n := range want {
		if _, ok := byName[n]; !ok {
			t.Errorf("scenario %s is not shipped", n)
		}
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name   string                   // case name
		load   func() (Scenario, error) // how the scenario is obtained
		check  func(Scenario) bool      // property of the result
		wantIs error                    // expected error identity
	}{
		{
			name:  "flaky hits 10% of shoot requests with 500 or 503",
			load:  func() (Scenario, error) { return Load("flaky") },
			check: func(s Scenario) bool { return *s.Faults[0].Probability == 0.1 && len(s.Faults[0].Fault.Codes) == 2 },
		},
		{
			name: "seed-region-down makes eu-central-1 unready",
			load: func() (Scenario, error) { return Load("seed-region-down") },
			check: func(s Scenario) bool {
				return len(s.UnreadySeedRegions) == 1 && s.UnreadySeedRegions[0] == "eu-central-1"
			},
		},
		{
			name: "shoot pattern replaces shoot-specific globs",
			load: func() (Scenario, error) {
				s, err := Load("quota-exceeded")
				return s.WithShootPattern("runtime-7"), err
			},
			check: func(s Scenario) bool { return s.Lifecycle[0].Shoot == "runtime-7" },
		},
		{
			name: "fault window replaces the outage's timing",
			load: func() (Scenario, error) {
				s, err := Load("outage")
				after, length := time.Duration(0), 5*time.Minute
				return s.WithFaultWindow(&after, &length), err
			},
			check: func(s Scenario) bool {
				return s.Faults[0].After.Duration == 0 && s.Faults[0].For.Duration == 5*time.Minute
			},
		},
		{
			name:   "unknown names are ErrUnknown",
			load:   func() (Scenario, error) { return Load("meteor") },
			wantIs: ErrUnknown,
		},
		{
			name:   "typos in files are errors",
			load:   func() (Scenario, error) { return Parse([]byte("name: x\nfautls: []\n")) },
			wantIs: errAny,
		},
		{
			name:   "invalid rules are errors",
			load:   func() (Scenario, error) { return Parse([]byte("name: x\nlifecycle: [{outcome: Boom}]\n")) },
			wantIs: errAny,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.load()
			switch {
			case errors.Is(tc.wantIs, errAny) && err != nil:
			case tc.wantIs != nil && errors.Is(err, tc.wantIs):
			case tc.wantIs == nil && err == nil && tc.check(s):
			default:
				t.Errorf("got %+v, %v", s, err)
			}
		})
	}
}

// errAny stands for any error.
var errAny = errors.New("any error")
