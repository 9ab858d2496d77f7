package localenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
			raw := PrometheusConfig("127.0.0.1:8080", "/repo/config/prometheus/rules.yaml", tc.amAddr)
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

// TestAlertmanagerConfigRedirectsEveryWebhook reads the repository's configuration: each of its
// webhooks must reach the local receiver, with its path, and nothing else may change.
func TestAlertmanagerConfigRedirectsEveryWebhook(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "alertmanager", "alertmanager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(AlertmanagerConfig(raw, "127.0.0.1:40000"))
	for _, want := range []string{"http://127.0.0.1:40000/oncall", "http://127.0.0.1:40000/devteam", "http://127.0.0.1:40000/deadman"} {
		if !strings.Contains(got, want) {
			t.Errorf("webhook %s missing", want)
		}
	}
	for _, gone := range []string{"url: http://127.0.0.1:19093", "url: http://127.0.0.1:19094", "url: http://127.0.0.1:19095"} {
		if strings.Contains(got, gone) {
			t.Errorf("webhook %s still configured", gone)
		}
	}
	if len(strings.Split(got, "\n")) != len(strings.Split(string(raw), "\n")) {
		t.Errorf("line count changed")
	}
	if unchanged := string(AlertmanagerConfig(raw, "")); unchanged != string(raw) {
		t.Errorf("without a receiver the configuration changed")
	}
}
