package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// platformAlerts are the shipped alerts about the whole manager that mute the per-runtime ones
// while they fire; status lists them next to the Runtime's own.
var platformAlerts = []string{"GardenerUnavailable", "InfrastructureManagerDown"}

// alertReport is one alert Prometheus has for the Runtime, or a platform alert.
type alertReport struct {
	Name     string      `json:"name"`
	State    string      `json:"state"`
	Severity string      `json:"severity,omitempty"`
	Since    metav1.Time `json:"since"`
	Summary  string      `json:"summary,omitempty"`
	// Platform is set for an alert about the whole manager rather than this Runtime.
	Platform bool `json:"platform,omitempty"`
}

// promAlerts is the part of Prometheus' GET /api/v1/alerts answer the plugin reads; the shape
// is the same on Prometheus 2 and 3.
type promAlerts struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		Alerts []struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
			State       string            `json:"state"`
			ActiveAt    time.Time         `json:"activeAt"`
		} `json:"alerts"`
	} `json:"data"`
}

// runtimeAlerts asks Prometheus for its pending and firing alerts and keeps the Runtime's (by
// runtime id, or by name for the alerts that carry only that) and the platform alerts.
func runtimeAlerts(ctx context.Context, base string, rt *infrav1.Runtime) ([]alertReport, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := strings.TrimSuffix(base, "/") + "/api/v1/alerts"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("prometheus: read %s: %w", u, err)
	}
	var got promAlerts
	if err := json.Unmarshal(body, &got); err != nil {
		return nil, fmt.Errorf("prometheus: %s answered %s, not the alerts API: %w", u, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || got.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s answered %s: %s", u, resp.Status, got.Error)
	}
	id := rt.Labels[infrav1.LabelRuntimeID]
	var out []alertReport
	for _, a := range got.Data.Alerts {
		name := a.Labels["alertname"]
		platform := slices.Contains(platformAlerts, name)
		mine := (id != "" && a.Labels["runtime_id"] == id) ||
			(a.Labels["runtime_id"] == "" && a.Labels["runtime_name"] == rt.Name)
		if !mine && !platform {
			continue
		}
		out = append(out, alertReport{
			Name: name, State: a.State, Severity: a.Labels["severity"], Since: metav1.NewTime(a.ActiveAt),
			Summary: a.Annotations["summary"], Platform: platform,
		})
	}
	slices.SortFunc(out, func(a, b alertReport) int { return strings.Compare(a.Name+a.State, b.Name+b.State) })
	return out, nil
}

func describeAlerts(w io.Writer, now time.Time, alerts []alertReport) {
	rows := make([][]string, 0, len(alerts))
	for _, a := range alerts {
		summary := a.Summary
		if a.Platform {
			summary = "(every Runtime) " + summary
		}
		rows = append(rows, []string{a.Name, a.State, orDash(a.Severity), since(now, a.Since), oneLine(summary, 120)})
	}
	table(w, "Alerts", "none pending or firing for this Runtime", []string{"NAME", "STATE", "SEVERITY", "SINCE", "SUMMARY"}, rows)
}
