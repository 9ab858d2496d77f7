package metrics_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// shippedRules are the rule files the manager ships: the one source and the PrometheusRule
// generated from it. Paths are relative to the repository's root.
var shippedRules = []string{"config/prometheus/rules.yaml", "config/prometheus/prometheusrule.yaml"}

// ruleGroups is the part of a Prometheus rule file these tests read.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record      string            `json:"record"`
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// query is one PromQL expression of a rule file.
type query struct {
	where string // the rule, and the annotation when it comes from one
	expr  string
}

// backticked finds the raw strings of an annotation's template: the queries it runs.
var backticked = regexp.MustCompile("`([^`]*)`")

// readRules returns every query of a rule file: each rule's expression and the queries in its
// annotations. It also returns the names the file's recording rules define.
func readRules(t *testing.T, path string) ([]query, map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		ruleGroups
		// Spec holds the groups of a PrometheusRule.
		Spec ruleGroups `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var queries []query
	recorded := map[string]bool{}
	for _, g := range append(file.Groups, file.Spec.Groups...) {
		for _, r := range g.Rules {
			name := g.Name + "/" + r.Alert + r.Record
			if r.Record != "" {
				recorded[r.Record] = true
			}
			queries = append(queries, query{where: name, expr: r.Expr})
			for key, text := range r.Annotations {
				for _, m := range backticked.FindAllStringSubmatch(text, -1) {
					queries = append(queries, query{where: name + " annotation " + key, expr: m[1]})
				}
			}
		}
	}
	return queries, recorded
}

// declaredNames returns the names of every declared metric.
func declaredNames() map[string]bool {
	names := map[string]bool{}
	for _, m := range metrics.Declared() {
		names[m.Name] = true
	}
	return names
}

// undeclared returns the names the queries read under the manager's prefix that are neither
// declared nor defined by a recording rule, each once, with where each was first read.
func undeclared(queries []query, declared, recorded map[string]bool) (map[string]string, int, error) {
	missing := map[string]string{}
	read := 0
	for _, q := range queries {
		names, err := metricNames(q.expr)
		if err != nil {
			return nil, 0, &queryError{where: q.where, err: err}
		}
		for _, n := range names {
			if !strings.HasPrefix(n, metrics.Prefix+"_") || recorded[n] {
				continue
			}
			read++
			if _, seen := missing[n]; !declared[n] && !seen {
				missing[n] = q.where
			}
		}
	}
	return missing, read, nil
}

type queryError struct {
	where string
	err   error
}

func (e *queryError) Error() string { return e.where + ": " + e.err.Error() }

// TestShippedRulesReadDeclaredMetrics reads every query of the shipped rule files. Each metric
// they read under the manager's prefix must be declared in package metrics.
func TestShippedRulesReadDeclaredMetrics(t *testing.T) {
	declared := declaredNames()
	for _, path := range shippedRules {
		t.Run(filepath.Base(path), func(t *testing.T) {
			queries, recorded := readRules(t, path)
			missing, read, err := undeclared(queries, declared, recorded)
			if err != nil {
				t.Fatal(err)
			}
			// The rules read the manager's metrics in every per-runtime and platform alert: none
			// read means the file was not understood, not that all is well.
			if read < 10 {
				t.Fatalf("%d reads of the manager's metrics in %d queries; the file was not read as expected", read, len(queries))
			}
			for name, where := range missing {
				t.Errorf("%s reads %s, which package metrics does not declare", where, name)
			}
		})
	}
}

// TestUndeclaredNamesAreFound feeds the check queries with known names: it finds the undeclared
// ones, and takes no label, string, function or keyword for a metric.
func TestUndeclaredNamesAreFound(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want []string // the undeclared names it must report, sorted
	}{
		{name: "declared names",
			expr: `max by (runtime_id) (time() - infrastructure_manager_runtime_step_entered_timestamp_seconds)
				> on (runtime_id, step) infrastructure_manager_runtime_step_deadline_seconds`},
		{name: "an undeclared name",
			expr: `sum(rate(infrastructure_manager_gardener_requests_totl{code=~"5..|error"}[5m]))`,
			want: []string{"infrastructure_manager_gardener_requests_totl"}},
		{name: "an undeclared name after a group modifier, an offset and a subquery",
			expr: `max_over_time(infrastructure_manager_gardener_circuit_state[2m30s:1m] offset 1h)
				* on (runtime_id) group_left (shoot) infrastructure_manager_runtime_shoot_info`,
			want: []string{"infrastructure_manager_runtime_shoot_info"}},
		{name: "an undeclared name in a __name__ matcher",
			expr: `{__name__="infrastructure_manager_runtime_gone", runtime_id!="x"}`,
			want: []string{"infrastructure_manager_runtime_gone"}},
		{name: "an undeclared quoted name",
			expr: `{"infrastructure_manager_quoted", job="infrastructure-manager"}`,
			want: []string{"infrastructure_manager_quoted"}},
		{name: "other exporters' metrics",
			expr: `absent(up{job="infrastructure-manager"} == 1) or controller_runtime_reconcile_total`},
		{name: "labels, strings, functions and comments that look like names",
			expr: `sum by (infrastructure_manager_label) (
				label_replace(infrastructure_manager_runtime_failed{infrastructure_manager_label="infrastructure_manager_value"},
				"x", "$1", "infrastructure_manager_src", "(.*)")) # infrastructure_manager_comment`},
		{name: "a recording rule's name",
			expr: `infrastructure_manager:recorded:ratio > 0.5`},
	}
	declared := declaredNames()
	recorded := map[string]bool{"infrastructure_manager:recorded:ratio": true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			missing, _, err := undeclared([]query{{where: tc.name, expr: tc.expr}}, declared, recorded)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for n := range missing {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("undeclared %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnreadableQueriesFail: a query the tokenizer cannot read fails the check rather than
// passing it unread.
func TestUnreadableQueriesFail(t *testing.T) {
	for _, expr := range []string{
		`infrastructure_manager_runtime_failed{class="Terminal}`,
		`rate(infrastructure_manager_gardener_requests_total[5m)`,
		`{__name__=~"infrastructure_manager_.*"}`,
	} {
		if _, _, err := undeclared([]query{{where: "test", expr: expr}}, declaredNames(), nil); err == nil {
			t.Errorf("%s: no error", expr)
		}
	}
}

// recordingRegisterer registers with a registry and keeps the descriptor of every metric.
type recordingRegisterer struct {
	*prometheus.Registry
	descs []string
}

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	for d := range ch {
		r.descs = append(r.descs, d.String())
	}
	return r.Registry.Register(c)
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// TestNewBuildsTheDeclaredMetrics builds the metrics on a fresh registry and compares what was
// registered, and the descriptors of the series read from the cache, with the declarations:
// names, help texts and labels.
func TestNewBuildsTheDeclaredMetrics(t *testing.T) {
	reg := &recordingRegisterer{Registry: prometheus.NewRegistry()}
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	got := append(slices.Clone(reg.descs), m.KubeconfigExpiration.Desc.String(),
		m.Upstream.RuntimeState.Desc.String(), m.Upstream.ClusterState.Desc.String(), m.Upstream.KubeconfigExpiration.Desc.String())
	var want []string
	for _, d := range metrics.Declared() {
		if !strings.HasPrefix(d.Name, metrics.Prefix+"_") {
			t.Errorf("%s does not start with %s_", d.Name, metrics.Prefix)
		}
		want = append(want, prometheus.NewDesc(d.Name, d.Help, d.Labels, nil).String())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registered:\n%s\ndeclared:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNewRefusesASecondSetOnOneRegistry: a registry takes each metric once, and a refused set
// leaves nothing registered.
func TestNewRefusesASecondSetOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(reg); err == nil {
		t.Fatal("a second set on the same registry: no error")
	}
	// A registry that held only the refused collectors would take a complete set now.
	other := prometheus.NewRegistry()
	// New registers it after the engine's metrics, which it must then undo. The help text is the
	// declared one: a registry remembers a name's help text after the name is unregistered.
	var opts prometheus.GaugeOpts
	for _, d := range metrics.Declared() {
		if d.Name == metrics.Prefix+"_gardener_circuit_state" {
			opts = prometheus.GaugeOpts{Name: d.Name, Help: d.Help}
		}
	}
	circuit := prometheus.NewGauge(opts)
	other.MustRegister(circuit)
	if _, err := metrics.New(other); err == nil {
		t.Fatal("a registry that has the circuit gauge: no error")
	}
	other.Unregister(circuit)
	if _, err := metrics.New(other); err != nil {
		t.Errorf("the refused set left something registered: %v", err)
	}
}
