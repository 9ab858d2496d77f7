package stack

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func TestPrometheusConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		// name describes the case.
		name string
		// amAddr is the Alertmanager address.
		amAddr string
		// wantAlerting says whether alerts are sent.
		wantAlerting bool
	}{
		{name: "with Alertmanager", amAddr: "127.0.0.1:9093", wantAlerting: true},
		{name: "Prometheus alone", amAddr: "", wantAlerting: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var cfg struct {
				Global    map[string]string `json:"global"`
				RuleFiles []string          `json:"rule_files"`
				Alerting  *struct {
					Alertmanagers []struct {
						StaticConfigs []struct {
							Targets []string `json:"targets"`
						} `json:"static_configs"`
					} `json:"alertmanagers"`
				} `json:"alerting"`
				ScrapeConfigs []struct {
					JobName       string `json:"job_name"`
					StaticConfigs []struct {
						Targets []string `json:"targets"`
					} `json:"static_configs"`
				} `json:"scrape_configs"`
			}
			raw := PrometheusConfig("127.0.0.1:8080", "/repo/config/prometheus/rules.yaml", tc.amAddr, 5*time.Second, 4*time.Second)
			if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
				t.Fatalf("not the expected YAML: %v\n%s", err, raw)
			}
			if cfg.Global["scrape_interval"] != "5s" || cfg.Global["evaluation_interval"] != "5s" {
				t.Errorf("global: got %v, want scrape and evaluation every 5s", cfg.Global)
			}
			if !slices.Equal(cfg.RuleFiles, []string{"/repo/config/prometheus/rules.yaml"}) {
				t.Errorf("rule_files: got %v", cfg.RuleFiles)
			}
			if len(cfg.ScrapeConfigs) != 1 || cfg.ScrapeConfigs[0].JobName != MetricsJob ||
				!slices.Equal(cfg.ScrapeConfigs[0].StaticConfigs[0].Targets, []string{"127.0.0.1:8080"}) {
				t.Errorf("scrape_configs: got %+v, want job %s on 127.0.0.1:8080", cfg.ScrapeConfigs, MetricsJob)
			}
			if got := cfg.Alerting != nil; got != tc.wantAlerting {
				t.Fatalf("alerting: got %v, want %v", got, tc.wantAlerting)
			}
			if tc.wantAlerting && !slices.Equal(cfg.Alerting.Alertmanagers[0].StaticConfigs[0].Targets, []string{tc.amAddr}) {
				t.Errorf("alertmanagers: got %+v", cfg.Alerting.Alertmanagers)
			}
		})
	}
}

func TestFindMonitoringPrefersTheEnvironmentThenBinThenPath(t *testing.T) {
	t.Parallel()
	// executable creates an executable file (mode 0o755) or a plain one, and returns its path.
	executable := func(t *testing.T, path string, mode os.FileMode) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		// name describes the case.
		name string
		// bin lists the files in the root's bin/monitoring, each executable unless in plain.
		bin, plain []string
		// env are the environment's PROMETHEUS and ALERTMANAGER, relative to the root ("" unset);
		// they are created as executables unless named "missing".
		env map[string]string
		// path are the names on PATH.
		path []string
		// wantProm and wantAM are the expected binaries, relative to the root; "PATH:name" is name
		// from PATH, "" none.
		wantProm, wantAM string
	}{
		{
			name:     "the builds in bin/monitoring before PATH",
			bin:      []string{"prometheus", "alertmanager"},
			path:     []string{"prometheus", "prometheus-alertmanager"},
			wantProm: "bin/monitoring/prometheus", wantAM: "bin/monitoring/alertmanager",
		},
		{
			name:     "the environment before bin/monitoring",
			bin:      []string{"prometheus", "alertmanager"},
			env:      map[string]string{"PROMETHEUS": "other/prometheus", "ALERTMANAGER": "other/am"},
			wantProm: "other/prometheus", wantAM: "other/am",
		},
		{
			name:     "an environment naming a missing file is passed over",
			bin:      []string{"prometheus"},
			env:      map[string]string{"PROMETHEUS": "missing", "ALERTMANAGER": "missing"},
			path:     []string{"prometheus-alertmanager"},
			wantProm: "bin/monitoring/prometheus", wantAM: "PATH:prometheus-alertmanager",
		},
		{
			name:     "PATH when bin/monitoring has none (Debian's names)",
			path:     []string{"prometheus", "prometheus-alertmanager"},
			wantProm: "PATH:prometheus", wantAM: "PATH:prometheus-alertmanager",
		},
		{
			name:     "a file in bin/monitoring that is not executable does not count",
			plain:    []string{"prometheus"},
			wantProm: "", wantAM: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for _, name := range tc.bin {
				executable(t, filepath.Join(root, MonitoringDir, name), 0o755)
			}
			for _, name := range tc.plain {
				executable(t, filepath.Join(root, MonitoringDir, name), 0o644)
			}
			env := map[string]string{}
			for k, v := range tc.env {
				env[k] = filepath.Join(root, v)
				if v != "missing" {
					executable(t, env[k], 0o755)
				}
			}
			lookPath := func(name string) (string, error) {
				if slices.Contains(tc.path, name) {
					return "PATH:" + name, nil
				}
				return "", os.ErrNotExist
			}
			want := func(rel string) string {
				if rel == "" || strings.HasPrefix(rel, "PATH:") {
					return rel
				}
				return filepath.Join(root, rel)
			}
			prom, am := findMonitoring(root, func(k string) string { return env[k] }, lookPath)
			if prom != want(tc.wantProm) || am != want(tc.wantAM) {
				t.Errorf("got Prometheus %q and Alertmanager %q, want %q and %q", prom, am, want(tc.wantProm), want(tc.wantAM))
			}
		})
	}
}
