package localenv

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// AlertNotification is the part of Alertmanager's webhook payload (version 4) the receiver reads.
type AlertNotification struct {
	// Receiver is the name of the receiver the route chose.
	Receiver string `json:"receiver"`
	// Status is firing or resolved, for the group.
	Status string `json:"status"`
	// Alerts are the alerts of the group, each with its own status.
	Alerts []NotifiedAlert `json:"alerts"`
}

// NotifiedAlert is one alert of a notification.
type NotifiedAlert struct {
	// Status is firing or resolved.
	Status string `json:"status"`
	// Labels identify the alert.
	Labels map[string]string `json:"labels"`
	// Annotations describe it.
	Annotations map[string]string `json:"annotations"`
	// Fingerprint identifies the label set.
	Fingerprint string `json:"fingerprint"`
}

// AlertReceiver stands in for every webhook of the Alertmanager configuration (on-call, dev-team,
// deadman) and prints each notified alert as one line, "ALERT <name> firing|resolved ->
// <receiver>", when its status at that receiver changes. Repeats (repeat_interval, the Watchdog
// heartbeat every minute) print nothing. It is safe for concurrent use.
type AlertReceiver struct {
	print func(line string)

	mu   sync.Mutex
	last map[string]string
}

// NewAlertReceiver returns a receiver that hands its lines to print.
func NewAlertReceiver(print func(line string)) *AlertReceiver {
	return &AlertReceiver{print: print, last: map[string]string{}}
}

// ServeHTTP accepts one webhook notification.
func (a *AlertReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an Alertmanager webhook notification", http.StatusMethodNotAllowed)
		return
	}
	var n AlertNotification
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&n); err != nil {
		http.Error(w, "not an Alertmanager webhook notification: "+err.Error(), http.StatusBadRequest)
		return
	}
	if n.Receiver == "" {
		// Fall back to the path of the configured URL: /oncall, /devteam, /deadman.
		n.Receiver = strings.Trim(r.URL.Path, "/")
	}
	for _, line := range a.Lines(n) {
		a.print(line)
	}
	w.WriteHeader(http.StatusOK)
}

// Lines returns the lines for the alerts of n whose status at n's receiver changed, and records
// the new status.
func (a *AlertReceiver) Lines(n AlertNotification) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var lines []string
	for _, al := range n.Alerts {
		status := al.Status
		if status == "" {
			status = n.Status
		}
		key := n.Receiver + "|" + alertIdentity(al)
		if a.last[key] == status {
			continue
		}
		if _, seen := a.last[key]; !seen && status == "resolved" {
			// A resolve of something never shown firing (say, from before a restart) says nothing.
			a.last[key] = status
			continue
		}
		a.last[key] = status
		lines = append(lines, FormatAlert(n.Receiver, status, al))
	}
	return lines
}

// alertIdentity is the fingerprint, or the sorted labels when there is none.
func alertIdentity(al NotifiedAlert) string {
	if al.Fingerprint != "" {
		return al.Fingerprint
	}
	keys := make([]string, 0, len(al.Labels))
	for k := range al.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s,", k, al.Labels[k])
	}
	return b.String()
}

// FormatAlert renders one alert: its name, status and receiver, the runtime it is about (if
// any) and its summary.
func FormatAlert(receiver, status string, al NotifiedAlert) string {
	line := fmt.Sprintf("ALERT %s %s -> %s", orDash(al.Labels["alertname"]), status, receiver)
	if rt := al.Labels["runtime_name"]; rt != "" {
		line += " runtime=" + rt
	} else if id := al.Labels["runtime_id"]; id != "" {
		line += " runtime_id=" + id
	}
	if s := al.Annotations["summary"]; s != "" {
		line += ": " + shorten(s, maxMessage)
	}
	return line
}

// webhookURL matches the loopback webhook URLs of config/alertmanager/alertmanager.yaml (ports
// 19093-19095), the ones a deployment replaces.
var webhookURL = regexp.MustCompile(`http://127\.0\.0\.1:1909[345]/`)

// AlertmanagerConfig returns the Alertmanager configuration with every webhook sent to the
// receiver at receiverAddr, keeping each URL's path; an empty receiverAddr returns it unchanged.
// The routing, grouping and inhibition stay as they are.
func AlertmanagerConfig(raw []byte, receiverAddr string) []byte {
	if receiverAddr == "" {
		return raw
	}
	return webhookURL.ReplaceAll(raw, []byte("http://"+receiverAddr+"/"))
}
