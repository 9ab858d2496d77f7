package e2e_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestScaledRulesAreTheShippedOnes checks that Prometheus runs the shipped rules: the test's copy
// differs from config/prometheus/rules.yaml only in `for` and `keep_firing_for`, each divided by
// timeScale, and Prometheus loaded every alert with its scaled `for`.
func TestScaledRulesAreTheShippedOnes(t *testing.T) {
	shipped, err := readShippedRules()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(sys.dir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got rulesFile
	if err := yaml.UnmarshalStrict(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Groups) != len(shipped.Groups) {
		t.Fatalf("groups: got %d, want %d", len(got.Groups), len(shipped.Groups))
	}
	for i, g := range shipped.Groups {
		if got.Groups[i].Name != g.Name || len(got.Groups[i].Rules) != len(g.Rules) {
			t.Errorf("group %d: got %s with %d rules, want %s with %d", i, got.Groups[i].Name, len(got.Groups[i].Rules), g.Name, len(g.Rules))
			continue
		}
		for j, want := range g.Rules {
			want.For, want.KeepFiringFor = scaledString(t, want.For), scaledString(t, want.KeepFiringFor)
			if !reflect.DeepEqual(got.Groups[i].Rules[j], want) {
				t.Errorf("group %s, rule %d:\ngot  %+v\nwant %+v", g.Name, j, got.Groups[i].Rules[j], want)
			}
		}
	}

	loaded, err := promRules(t.Context(), sys.promURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range shipped.alerts() {
		var want float64
		if r.For != "" {
			d, err := parseDuration(r.For)
			if err != nil {
				t.Fatal(err)
			}
			want = scaled(d).Seconds()
		}
		if l, ok := loaded[r.Alert]; !ok || l.Duration != want {
			t.Errorf("Prometheus loaded %s with for %vs (found %v), want %vs", r.Alert, l.Duration, ok, want)
		}
	}
}

// scaledString is what scaleRules makes of a `for` or `keep_firing_for` value.
func scaledString(t *testing.T, s string) string {
	t.Helper()
	if s == "" {
		return ""
	}
	d, err := parseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return formatDuration(scaled(d))
}

// TestAlertmanagerConfigIsTheShippedOne checks that Alertmanager runs the shipped routing: the
// test's copy differs from config/alertmanager/alertmanager.yaml only in the webhook URLs and the
// route timers.
func TestAlertmanagerConfigIsTheShippedOne(t *testing.T) {
	read := func(path string) map[string]any {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	shipped := read(filepath.Join(testenv.RepoRoot(), shippedAlertmanager))
	got := read(sys.mon.AlertmanagerConfigFile)
	for _, doc := range []map[string]any{shipped, got} {
		dropAdapted(doc)
	}
	if !reflect.DeepEqual(got, shipped) {
		t.Errorf("the test's Alertmanager configuration differs from the shipped one in more than URLs and timers:\ngot  %v\nwant %v", got, shipped)
	}
}

// dropAdapted deletes what the test adapts from an Alertmanager configuration: the route timers
// and the webhook URLs.
func dropAdapted(doc map[string]any) {
	var dropTimers func(route map[string]any)
	dropTimers = func(route map[string]any) {
		delete(route, "group_wait")
		delete(route, "group_interval")
		delete(route, "repeat_interval")
		children, _ := route["routes"].([]any)
		for _, c := range children {
			if child, ok := c.(map[string]any); ok {
				dropTimers(child)
			}
		}
	}
	if route, ok := doc["route"].(map[string]any); ok {
		dropTimers(route)
	}
	receivers, _ := doc["receivers"].([]any)
	for _, r := range receivers {
		recv, _ := r.(map[string]any)
		hooks, _ := recv["webhook_configs"].([]any)
		for _, h := range hooks {
			if hook, ok := h.(map[string]any); ok {
				delete(hook, "url")
			}
		}
	}
}

// TestDurations checks the duration arithmetic of the adapted configuration.
func TestDurations(t *testing.T) {
	cases := []struct {
		name string
		// in is a Prometheus duration as the shipped files write it.
		in string
		// scaled is in divided by timeScale, as scaleRules writes it.
		scaled string
		// parsed is in as a Go duration.
		parsed time.Duration
	}{
		{name: "minute", in: "1m", scaled: "2s", parsed: time.Minute},
		{name: "five minutes", in: "5m", scaled: "10s", parsed: 5 * time.Minute},
		{name: "ten minutes", in: "10m", scaled: "20s", parsed: 10 * time.Minute},
		{name: "below a second becomes one", in: "15s", scaled: "1s", parsed: 15 * time.Second},
		{name: "compound", in: "1h30m", scaled: "3m", parsed: 90 * time.Minute},
		{name: "day", in: "1d", scaled: "48m", parsed: 24 * time.Hour},
		{name: "milliseconds", in: "1500ms", scaled: "1s", parsed: 1500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := parseDuration(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if d != c.parsed {
				t.Errorf("parse %s: got %s, want %s", c.in, d, c.parsed)
			}
			if got := formatDuration(scaled(d)); got != c.scaled {
				t.Errorf("scale %s: got %s, want %s", c.in, got, c.scaled)
			}
		})
	}
	for _, bad := range []string{"", "5", "m", "5x", "1.5m"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parse %q: no error", bad)
		}
	}
}
