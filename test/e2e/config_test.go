package e2e_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// timeScale divides every `for` and `keep_firing_for` of the shipped rules, so that an alert
// that waits a minute in production waits two seconds here.
const timeScale = 30

// Caps on the Alertmanager timers of every route: a notification leaves a second after its
// group changed, and nothing is repeated during a run.
const (
	maxGroupWait      = time.Second
	maxGroupInterval  = time.Second
	maxRepeatInterval = time.Hour
)

// scaleRules returns a rules file in which every `for` and `keep_firing_for` of the given one is
// divided by timeScale (rounded to whole seconds, at least one second). Everything else, the
// expressions and their range windows included, is kept as it is.
func scaleRules(data []byte) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	groups, ok := doc["groups"].([]any)
	if !ok {
		return nil, errors.New("rules: no list of groups")
	}
	for i, g := range groups {
		group, ok := g.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("rules: group %d is not a mapping", i)
		}
		rules, ok := group["rules"].([]any)
		if !ok {
			return nil, fmt.Errorf("rules: group %v has no list of rules", group["name"])
		}
		for j, r := range rules {
			rule, ok := r.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("rules: rule %d of group %v is not a mapping", j, group["name"])
			}
			for _, key := range []string{"for", "keep_firing_for"} {
				if err := scaleField(rule, key); err != nil {
					return nil, fmt.Errorf("rules: group %v, rule %d: %w", group["name"], j, err)
				}
			}
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("write rules: %w", err)
	}
	return out, nil
}

// scaleField divides the duration m[key], if there is one, by timeScale.
func scaleField(m map[string]any, key string) error {
	v, ok := m[key]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("%s: %v is not a duration", key, v)
	}
	d, err := parseDuration(s)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	m[key] = formatDuration(scaled(d))
	return nil
}

// scaled divides a production duration by timeScale, rounded to whole seconds, at least 1s.
func scaled(d time.Duration) time.Duration {
	return max(time.Second, (d / timeScale).Round(time.Second))
}

// alertmanagerConfig returns the Alertmanager configuration with the webhook URL of each receiver
// replaced by webhooks[receiver name] and the route timers capped (maxGroupWait, maxGroupInterval,
// maxRepeatInterval). Routes, matchers, inhibit rules and everything else stay as shipped. Every
// receiver with a webhook needs a URL, and every URL a receiver.
func alertmanagerConfig(data []byte, webhooks map[string]string) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse alertmanager config: %w", err)
	}
	route, ok := doc["route"].(map[string]any)
	if !ok {
		return nil, errors.New("alertmanager config: no route")
	}
	if err := capRouteTimers(route); err != nil {
		return nil, err
	}
	receivers, ok := doc["receivers"].([]any)
	if !ok {
		return nil, errors.New("alertmanager config: no list of receivers")
	}
	used := map[string]bool{}
	for _, r := range receivers {
		recv, ok := r.(map[string]any)
		if !ok {
			return nil, errors.New("alertmanager config: a receiver is not a mapping")
		}
		name, _ := recv["name"].(string)
		hooks, _ := recv["webhook_configs"].([]any)
		for _, h := range hooks {
			hook, ok := h.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("alertmanager config: receiver %s: a webhook is not a mapping", name)
			}
			url, ok := webhooks[name]
			if !ok {
				return nil, fmt.Errorf("alertmanager config: the test has no webhook for receiver %q", name)
			}
			hook["url"] = url
			used[name] = true
		}
	}
	for name := range webhooks {
		if !used[name] {
			return nil, fmt.Errorf("alertmanager config: no receiver %q with a webhook", name)
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("write alertmanager config: %w", err)
	}
	return out, nil
}

// capRouteTimers caps the timers a route sets, and those of its child routes.
func capRouteTimers(route map[string]any) error {
	for key, limit := range map[string]time.Duration{
		"group_wait": maxGroupWait, "group_interval": maxGroupInterval, "repeat_interval": maxRepeatInterval,
	} {
		v, ok := route[key]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("alertmanager config: %s: %v is not a duration", key, v)
		}
		d, err := parseDuration(s)
		if err != nil {
			return fmt.Errorf("alertmanager config: %s: %w", key, err)
		}
		route[key] = formatDuration(min(d, limit))
	}
	children, _ := route["routes"].([]any)
	for _, c := range children {
		child, ok := c.(map[string]any)
		if !ok {
			return errors.New("alertmanager config: a route is not a mapping")
		}
		if err := capRouteTimers(child); err != nil {
			return err
		}
	}
	return nil
}

// durationUnits are the units of Prometheus and Alertmanager durations.
var durationUnits = map[string]time.Duration{
	"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
	"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "y": 365 * 24 * time.Hour,
}

// parseDuration parses a Prometheus duration such as "5m", "1h30m" or "1d".
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("empty duration")
	}
	var total time.Duration
	for rest := s; rest != ""; {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		u := n
		for u < len(rest) && (rest[u] < '0' || rest[u] > '9') {
			u++
		}
		value, err := strconv.ParseInt(rest[:n], 10, 64)
		unit, ok := durationUnits[rest[n:u]]
		if err != nil || !ok {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		total += time.Duration(value) * unit
		rest = rest[u:]
	}
	return total, nil
}

// formatDuration writes a duration in the largest unit that divides it exactly.
func formatDuration(d time.Duration) string {
	for _, u := range []struct {
		name string
		unit time.Duration
	}{{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// rulesFile is a Prometheus rules file.
type rulesFile struct {
	Groups []struct {
		Name  string      `json:"name"`
		Rules []rulesRule `json:"rules"`
	} `json:"groups"`
}

// rulesRule is one recording or alerting rule.
type rulesRule struct {
	Record        string            `json:"record,omitempty"`
	Alert         string            `json:"alert,omitempty"`
	Expr          string            `json:"expr"`
	For           string            `json:"for,omitempty"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// alerts returns the alerting rules, in file order.
func (f rulesFile) alerts() []rulesRule {
	var out []rulesRule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// alert returns the alerting rule called name.
func (f rulesFile) alert(name string) (rulesRule, bool) {
	for _, r := range f.alerts() {
		if r.Alert == name {
			return r, true
		}
	}
	return rulesRule{}, false
}

// readShippedRules reads config/prometheus/rules.yaml.
func readShippedRules() (rulesFile, error) {
	var f rulesFile
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), shippedRules))
	if err != nil {
		return f, fmt.Errorf("read shipped rules: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return f, fmt.Errorf("parse shipped rules: %w", err)
	}
	return f, nil
}
