package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// webhookMessage is the body Alertmanager's webhook receiver posts (version 4).
type webhookMessage struct {
	Receiver    string            `json:"receiver"`
	Status      string            `json:"status"`
	GroupLabels map[string]string `json:"groupLabels"`
	Alerts      []webhookAlert    `json:"alerts"`
}

// webhookAlert is one alert of a notification.
type webhookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	// GeneratorURL links to the expression in Prometheus that raised the alert.
	GeneratorURL string `json:"generatorURL"`
}

// delivery is one alert as a receiver got it, with the time the notification arrived.
type delivery struct {
	at    time.Time
	alert webhookAlert
}

func (d delivery) String() string {
	return fmt.Sprintf("%s %s %s %v", d.at.Format("15:04:05.000"), d.alert.Labels["alertname"], d.alert.Status, d.alert.Labels)
}

// receiver is a webhook endpoint that records every alert of every notification it gets.
type receiver struct {
	name string
	srv  *httptest.Server

	mu  sync.Mutex
	got []delivery
	bad []string // requests that were not a webhook notification
}

// newReceiver serves a webhook for the Alertmanager receiver called name, on path /path.
func newReceiver(name, path string) *receiver {
	r := &receiver{name: name}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /"+path, func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		var msg webhookMessage
		if err := json.NewDecoder(req.Body).Decode(&msg); err != nil {
			r.mu.Lock()
			r.bad = append(r.bad, err.Error())
			r.mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		if msg.Receiver != name {
			r.bad = append(r.bad, fmt.Sprintf("notification for receiver %q", msg.Receiver))
		}
		for _, a := range msg.Alerts {
			r.got = append(r.got, delivery{at: at, alert: a})
		}
		r.mu.Unlock()
	})
	r.srv = httptest.NewServer(mux)
	return r
}

// url is the webhook URL for the Alertmanager configuration.
func (r *receiver) url(path string) string { return r.srv.URL + "/" + path }

// close stops the server.
func (r *receiver) close() { r.srv.Close() }

// match selects deliveries: empty fields match anything.
type match struct {
	alertname string
	runtimeID string
	// status is the alert's status: firing or resolved.
	status string
	// since excludes deliveries that arrived before it.
	since time.Time
}

func (m match) String() string {
	return fmt.Sprintf("alertname=%q runtime_id=%q status=%q since %s", m.alertname, m.runtimeID, m.status, m.since.Format("15:04:05.000"))
}

func (m match) matches(d delivery) bool {
	return (m.alertname == "" || d.alert.Labels["alertname"] == m.alertname) &&
		(m.runtimeID == "" || d.alert.Labels["runtime_id"] == m.runtimeID) &&
		(m.status == "" || d.alert.Status == m.status) &&
		!d.at.Before(m.since)
}

// find returns the deliveries that match, oldest first.
func (r *receiver) find(m match) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []delivery
	for _, d := range r.got {
		if m.matches(d) {
			out = append(out, d)
		}
	}
	return out
}

// dump describes everything the receiver got, for failure messages.
func (r *receiver) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s received %d alerts:", r.name, len(r.got))
	for _, d := range r.got {
		if d.alert.Labels["alertname"] == "Watchdog" {
			continue
		}
		fmt.Fprintf(&b, "\n  %s", d)
	}
	for _, s := range r.bad {
		fmt.Fprintf(&b, "\n  bad request: %s", s)
	}
	return b.String()
}

// badRequests returns the requests that were not a notification for this receiver.
func (r *receiver) badRequests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}
