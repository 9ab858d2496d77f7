// Command genrule generates config/prometheus/prometheusrule.yaml, a monitoring.coreos.com/v1
// PrometheusRule, from config/prometheus/rules.yaml, the plain Prometheus rules file that is the one
// source of Infrastructure Manager's alerts. With -verify it writes nothing and exits non-zero
// when the committed PrometheusRule differs from what it would generate.
//
// Before generating it checks the conventions that routing and on-call rely on: every alert has
// the labels severity, team and service, the annotations summary, description and runbook_url, a
// runbook_url that points at docs/runbooks/<alert>.md, and that runbook file exists.
//
// Run from the repository root:
//
//	go run ./hack/alerting/genrule          # regenerate
//	go run ./hack/alerting/genrule -verify  # check only (hack/alerting/test.sh)
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	runbookBase = "https://github.com/runtime-ops/infrastructure-manager/blob/main/docs/runbooks/"
	team        = "infrastructure-manager"
	service     = "infrastructure-manager"
)

// severities are the values Alertmanager's routing tree knows (config/alertmanager/alertmanager.yaml).
var severities = []string{"critical", "warning", "none"}

// ruleFile is a Prometheus rules file; its groups are also the spec of a PrometheusRule.
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Rules    []rule `json:"rules"`
}

type rule struct {
	Record        string            `json:"record,omitempty"`
	Alert         string            `json:"alert,omitempty"`
	Expr          string            `json:"expr"`
	For           string            `json:"for,omitempty"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type prometheusRule struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       ruleFile   `json:"spec"`
}

type objectMeta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels"`
}

// options are the command line flags.
type options struct {
	in, out, runbooks, name, namespace string
	verify                             bool
}

func main() {
	var o options
	flag.StringVar(&o.in, "in", "config/prometheus/rules.yaml", "the Prometheus rules file to read")
	flag.StringVar(&o.out, "out", "config/prometheus/prometheusrule.yaml", "the PrometheusRule file to write (or, with -verify, to compare)")
	flag.StringVar(&o.runbooks, "runbooks", "docs/runbooks", "directory that must hold <alert>.md for every alert; empty skips the check")
	flag.StringVar(&o.name, "name", "infrastructure-manager", "metadata.name of the PrometheusRule")
	flag.StringVar(&o.namespace, "namespace", "kcp-system", "metadata.namespace of the PrometheusRule")
	flag.BoolVar(&o.verify, "verify", false, "write nothing; exit 1 when -out differs from what would be generated")
	flag.Parse()

	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "genrule: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	src, err := os.ReadFile(o.in)
	if err != nil {
		return fmt.Errorf("read rules: %w", err)
	}
	want, err := generate(src, o)
	if err != nil {
		return fmt.Errorf("%s: %w", o.in, err)
	}
	if !o.verify {
		if err := os.WriteFile(o.out, want, 0o644); err != nil {
			return fmt.Errorf("write PrometheusRule: %w", err)
		}
		fmt.Printf("genrule: wrote %s from %s\n", o.out, o.in)
		return nil
	}
	got, err := os.ReadFile(o.out)
	if err != nil {
		return fmt.Errorf("read PrometheusRule: %w", err)
	}
	if d := firstDifference(got, want); d != "" {
		return fmt.Errorf("%s is stale: it does not match %s (%s); regenerate with: go run ./hack/alerting/genrule", o.out, o.in, d)
	}
	fmt.Printf("genrule: %s matches %s\n", o.out, o.in)
	return nil
}

// generate parses and checks the rules file and renders the PrometheusRule, header included.
func generate(src []byte, o options) ([]byte, error) {
	var rf ruleFile
	if err := yaml.UnmarshalStrict(src, &rf); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if err := check(rf, o.runbooks); err != nil {
		return nil, err
	}
	pr := prometheusRule{
		APIVersion: "monitoring.coreos.com/v1",
		Kind:       "PrometheusRule",
		Metadata: objectMeta{
			Name:      o.name,
			Namespace: o.namespace,
			// Prometheus Operator selects rules by label (spec.ruleSelector of the Prometheus);
			// a deployment adds the label its Prometheus selects with a kustomize patch.
			Labels: map[string]string{
				"app.kubernetes.io/name":      "infrastructure-manager",
				"app.kubernetes.io/component": "alerting",
				"app.kubernetes.io/part-of":   "infrastructure-manager",
				"role":                        "alert-rules",
			},
		},
		Spec: rf,
	}
	body, err := yaml.Marshal(pr)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	header := fmt.Sprintf("# Code generated by hack/alerting/genrule from %s. DO NOT EDIT.\n"+
		"# Edit %s instead, then run: go run ./hack/alerting/genrule\n", filepath.ToSlash(o.in), filepath.ToSlash(o.in))
	return append([]byte(header), body...), nil
}

// check enforces the conventions of the rules file and returns every violation at once.
func check(rf ruleFile, runbooks string) error {
	var errs []error
	if len(rf.Groups) == 0 {
		errs = append(errs, errors.New("no rule groups"))
	}
	alerts := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			switch {
			case r.Alert != "" && r.Record != "":
				errs = append(errs, fmt.Errorf("group %s: rule %s has both alert and record", g.Name, r.Alert))
			case r.Record != "":
				continue
			case r.Alert == "":
				errs = append(errs, fmt.Errorf("group %s: a rule has neither alert nor record", g.Name))
				continue
			}
			if alerts[r.Alert] {
				errs = append(errs, fmt.Errorf("alert %s is defined twice", r.Alert))
			}
			alerts[r.Alert] = true
			errs = append(errs, checkAlert(r, runbooks)...)
		}
	}
	return errors.Join(errs...)
}

func checkAlert(r rule, runbooks string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("alert %s: "+format, append([]any{r.Alert}, args...)...))
	}
	if s := r.Labels["severity"]; !slices.Contains(severities, s) {
		bad("label severity is %q, want one of %s", s, strings.Join(severities, ", "))
	}
	if r.Labels["team"] != team {
		bad("label team is %q, want %q", r.Labels["team"], team)
	}
	if r.Labels["service"] != service {
		bad("label service is %q, want %q", r.Labels["service"], service)
	}
	for _, a := range []string{"summary", "description", "runbook_url"} {
		if strings.TrimSpace(r.Annotations[a]) == "" {
			bad("annotation %s is missing", a)
		}
	}
	if u, want := r.Annotations["runbook_url"], runbookBase+r.Alert+".md"; u != "" && u != want {
		bad("runbook_url is %q, want %q", u, want)
	}
	if runbooks != "" {
		if _, err := os.Stat(filepath.Join(runbooks, r.Alert+".md")); err != nil {
			bad("no runbook: %v", err)
		}
	}
	return errs
}

// firstDifference describes the first line where got and want differ, or returns "" when equal.
func firstDifference(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("first difference at line %d: have %q, want %q", i+1, gl, wl)
		}
	}
	return "they differ in line endings"
}
