package scenario

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/scenarios"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
)

// ErrUnknown is returned for a scenario name that is not shipped.
var ErrUnknown = errors.New("unknown scenario")

// Scenario is a named set of fault and lifecycle rules.
type Scenario struct {
	// Name identifies the scenario.
	Name string `json:"name"`
	// Description says in one line what the scenario simulates.
	Description string `json:"description"`
	// Faults are the fault rules of the front proxy.
	Faults []fault.Rule `json:"faults,omitempty"`
	// Lifecycle are the rules of the shoot lifecycle controller.
	Lifecycle []lifecycle.Rule `json:"lifecycle,omitempty"`
	// UnreadySeedRegions are the regions whose seeds are not ready (their
	// gardenlet stopped posting status) while the scenario applies.
	UnreadySeedRegions []string `json:"unreadySeedRegions,omitempty"`
}

// Parse reads a scenario from YAML (or JSON); unknown fields and invalid
// rules are errors.
func Parse(data []byte) (Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return Scenario{}, fmt.Errorf("parse scenario: %w", err)
	}
	for _, r := range s.Faults {
		if err := r.Validate(); err != nil {
			return Scenario{}, fmt.Errorf("scenario %q: %w", s.Name, err)
		}
	}
	for _, r := range s.Lifecycle {
		if err := r.Validate(); err != nil {
			return Scenario{}, fmt.Errorf("scenario %q: %w", s.Name, err)
		}
	}
	return s, nil
}

// LoadFile reads a scenario file.
func LoadFile(name string) (Scenario, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return Scenario{}, fmt.Errorf("read scenario file: %w", err)
	}
	return Parse(data)
}

// Load returns the shipped scenario called name.
func Load(name string) (Scenario, error) {
	data, err := fs.ReadFile(scenarios.FS, name+".yaml")
	if errors.Is(err, fs.ErrNotExist) {
		return Scenario{}, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	if err != nil {
		return Scenario{}, fmt.Errorf("read scenario %q: %w", name, err)
	}
	return Parse(data)
}

// Names lists the shipped scenarios, sorted.
func Names() []string {
	entries, _ := fs.Glob(scenarios.FS, "*.yaml")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(path.Base(e), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// All returns every shipped scenario, sorted by name.
func All() ([]Scenario, error) {
	var all []Scenario
	for _, n := range Names() {
		s, err := Load(n)
		if err != nil {
			return nil, err
		}
		all = append(all, s)
	}
	return all, nil
}

// WithShootPattern returns the scenario with glob as the shoot name pattern
// of every rule that targets particular shoots (fault rules with a name
// pattern, lifecycle rules with a shoot pattern).
func (s Scenario) WithShootPattern(glob string) Scenario {
	s.Faults = slices.Clone(s.Faults)
	for i := range s.Faults {
		if s.Faults[i].Match.Name != "" {
			s.Faults[i].Match.Name = glob
		}
	}
	s.Lifecycle = slices.Clone(s.Lifecycle)
	for i := range s.Lifecycle {
		if s.Lifecycle[i].Shoot != "" {
			s.Lifecycle[i].Shoot = glob
		}
	}
	return s
}

// WithFaultWindow returns the scenario with the start (after) and length
// (duration) of its time-bounded fault rules replaced; a nil argument keeps
// the scenario's value.
func (s Scenario) WithFaultWindow(after, duration *time.Duration) Scenario {
	s.Faults = slices.Clone(s.Faults)
	for i := range s.Faults {
		r := &s.Faults[i]
		if r.After == nil && r.For == nil {
			continue
		}
		if after != nil {
			r.After = &metav1.Duration{Duration: *after}
		}
		if duration != nil {
			r.For = &metav1.Duration{Duration: *duration}
		}
	}
	return s
}

// WriteList writes one line per shipped scenario, its name and description, for command help.
func WriteList(out io.Writer) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	all, err := All()
	if err != nil {
		fmt.Fprintf(w, "  (cannot read the shipped scenarios: %v)\n", err)
	}
	for _, s := range all {
		fmt.Fprintf(w, "  %s\t%s\n", s.Name, s.Description)
	}
	_ = w.Flush()
}
