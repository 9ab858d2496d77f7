package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
)

func TestHelpDocumentsEveryFlagAndScenario(t *testing.T) {
	var out bytes.Buffer
	if err := Run(t.Context(), []string{"--help"}, &out, &out); err != nil {
		t.Fatalf("--help = %v", err)
	}
	help := out.String()
	newFlagSet(&settings{}, &bytes.Buffer{}).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(help, "--"+f.Name) {
			t.Errorf("help does not mention --%s", f.Name)
		}
	})
	all, err := scenario.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if !strings.Contains(help, s.Name) || !strings.Contains(help, s.Description) {
			t.Errorf("help does not list scenario %s with its description", s.Name)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string              // case name
		args  []string            // command line
		check func(settings) bool // property of the settings
		fails bool                // whether parsing fails
	}{
		{
			name: "defaults",
			args: nil,
			check: func(s settings) bool {
				return s.scenario == "healthy" && s.shootMode == "dedicated" && s.operationDuration == 5*time.Second
			},
		},
		{
			name: "every option",
			args: []string{"--scenario", "outage", "--projects", "a,b", "--shoot-mode", "shared", "--operation-duration", "2s",
				"--listen", "127.0.0.1:1", "--admin-listen", "", "--kubeconfig-out", "/tmp/k", "--garden-admin-kubeconfig-out", "/tmp/g", "--assets", "/bin/k8s", "--seed", "9", "--fault-for", "1m"},
			check: func(s settings) bool {
				return s.scenario == "outage" && s.projects == "a,b" && s.shootMode == "shared" && s.seed == 9 &&
					s.adminListen == "" && s.adminKubeconfig == "/tmp/g" && s.faultFor.d != nil && *s.faultFor.d == time.Minute
			},
		},
		{name: "unknown shoot mode", args: []string{"--shoot-mode", "virtual"}, fails: true},
		{name: "stray argument", args: []string{"run"}, fails: true},
		{name: "bad duration", args: []string{"--fault-after", "soon"}, fails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(tc.args, &bytes.Buffer{})
			if (err != nil) != tc.fails {
				t.Fatalf("parse = %v, want failure %v", err, tc.fails)
			}
			if err == nil && !tc.check(s) {
				t.Errorf("settings = %+v", s)
			}
		})
	}
}

func TestLoadScenarioAppliesOverrides(t *testing.T) {
	s, err := parse([]string{"--scenario", "quota-exceeded", "--shoot-pattern", "rt-1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := s.loadScenario()
	if err != nil {
		t.Fatal(err)
	}
	if sc.Lifecycle[0].Shoot != "rt-1" {
		t.Errorf("shoot pattern = %q, want rt-1", sc.Lifecycle[0].Shoot)
	}
	if _, err := (settings{scenario: "meteor"}).loadScenario(); err == nil {
		t.Error("an unknown scenario loaded")
	}
}
