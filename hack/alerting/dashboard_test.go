// Package alerting holds the tests of the alerting assets that are not Prometheus rules: the
// Grafana dashboard here; hack/alerting/test.sh runs the rest (promtool, amtool).
package alerting

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const dashboardPath = "../../config/grafana/infrastructure-manager-dashboard.json"

type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
}

// TestDashboard checks that the dashboard is valid JSON with a Prometheus data source variable that
// every query panel uses, unique panel ids, panels inside the 24-column grid, and the panels that
// on-call relies on.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard needs a uid and a title")
	}

	hasDatasourceVar := false
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" {
			hasDatasourceVar = true
		}
	}
	if !hasDatasourceVar {
		t.Errorf("no template variable datasource of type datasource for prometheus")
	}

	ids := map[int]string{}
	titles := map[string]bool{}
	for _, p := range d.Panels {
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", p.Title, other, p.ID)
		}
		ids[p.ID] = p.Title
		titles[p.Title] = true
		if p.GridPos.X < 0 || p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q lies outside the 24-column grid: %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the datasource variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			if refs[tg.RefID] {
				t.Errorf("panel %q repeats refId %q", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
		}
	}

	for _, want := range []string{
		"Runtimes failed by class and reason",
		"Runtimes retrying by step and reason",
		"Retries by step",
		"Retries exhausted by step and class",
		"Step duration p50 and p95",
		"Gardener requests by code",
		"Gardener circuit",
		"Reconcile error ratio",
	} {
		if !titles[want] {
			t.Errorf("no panel titled %q", want)
		}
	}
}
