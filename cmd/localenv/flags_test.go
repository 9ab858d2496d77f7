package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		// name describes the case.
		name string
		// args are the command-line arguments.
		args []string
		// check inspects the settings of a successful parse.
		check func(settings) bool
		// wantErr is a substring of the expected error; empty for none.
		wantErr string
	}{
		{
			name: "defaults",
			check: func(s settings) bool {
				return s.scenario == "healthy" && s.samples == "config/samples" && s.operationDuration == 10*time.Second &&
					s.metricsAddr == "127.0.0.1:8080" && s.kubeconfigOut == "bin/local/kubeconfig" && s.monitoring
			},
		},
		{
			name: "every flag",
			args: []string{"--scenario", "flaky", "--samples", "x", "--operation-duration", "3s", "--metrics-address", "127.0.0.1:1",
				"--kubeconfig-out", "", "--work-dir", "w", "--assets", "a", "--monitoring=false", "--seed", "7", "--v", "2"},
			check: func(s settings) bool {
				return s.scenario == "flaky" && s.samples == "x" && s.operationDuration == 3*time.Second && s.metricsAddr == "127.0.0.1:1" &&
					s.kubeconfigOut == "" && s.workDir == "w" && s.assets == "a" && !s.monitoring && s.seed == 7 && s.verbosity == 2
			},
		},
		{name: "stray argument", args: []string{"flaky"}, wantErr: "unexpected arguments"},
		{name: "zero operation duration", args: []string{"--operation-duration", "0s"}, wantErr: "must be positive"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "parse flags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := parse(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error: got %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(s) {
				t.Errorf("settings: got %+v", s)
			}
		})
	}
}

// TestHelpNamesEveryFlagAndScenario: --help is the reference of make run.
func TestHelpNamesEveryFlagAndScenario(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := parse([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: got %v, want flag.ErrHelp", err)
	}
	var s settings
	newFlagSet(&s, &bytes.Buffer{}).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(out.String(), "--"+f.Name) {
			t.Errorf("help lacks --%s", f.Name)
		}
	})
	for _, n := range scenario.Names() {
		if !strings.Contains(out.String(), "  "+n+" ") {
			t.Errorf("help lacks scenario %s", n)
		}
	}
}
