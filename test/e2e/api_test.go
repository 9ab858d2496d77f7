package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// getJSON decodes the JSON answer of a GET.
func getJSON(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	return doJSON(req, out)
}

// sendJSON sends body as JSON with the method (a nil body sends none) and decodes the answer
// into out, unless out is nil.
func sendJSON(ctx context.Context, method, u string, body, out any) error {
	var payload io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, payload)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return doJSON(req, out)
}

func doJSON(req *http.Request, out any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", req.Method, req.URL, err)
	}
	return nil
}

// promSample is one series of an instant query.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery runs an instant query against Prometheus.
func promQuery(ctx context.Context, promURL, expr string) ([]promSample, error) {
	var resp struct {
		Data struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := getJSON(ctx, promURL+"/api/v1/query?query="+url.QueryEscape(expr), &resp); err != nil {
		return nil, err
	}
	return resp.Data.Result, nil
}

// promRule is an alerting or recording rule as Prometheus loaded it.
type promRule struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Duration is the rule's `for`, in seconds.
	Duration float64 `json:"duration"`
	// State is inactive, pending or firing.
	State string `json:"state"`
}

// promRules returns the loaded rules by name.
func promRules(ctx context.Context, promURL string) (map[string]promRule, error) {
	var resp struct {
		Data struct {
			Groups []struct {
				Rules []promRule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := getJSON(ctx, promURL+"/api/v1/rules", &resp); err != nil {
		return nil, err
	}
	out := map[string]promRule{}
	for _, g := range resp.Data.Groups {
		for _, r := range g.Rules {
			out[r.Name] = r
		}
	}
	return out, nil
}

// amAlert is an alert as Alertmanager's API v2 lists it.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Status      struct {
		// State is active, suppressed (inhibited or silenced) or unprocessed.
		State       string   `json:"state"`
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status"`
	Receivers []struct {
		Name string `json:"name"`
	} `json:"receivers"`
}

// amAlerts lists Alertmanager's alerts that match every filter (a label matcher such as
// `alertname="Watchdog"`).
func amAlerts(ctx context.Context, amURL string, filters ...string) ([]amAlert, error) {
	q := url.Values{}
	for _, f := range filters {
		q.Add("filter", f)
	}
	var out []amAlert
	if err := getJSON(ctx, amURL+"/api/v2/alerts?"+q.Encode(), &out); err != nil {
		return nil, err
	}
	return out, nil
}
