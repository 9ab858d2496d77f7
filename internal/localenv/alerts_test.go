package localenv

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestAlertReceiver(t *testing.T) {
	t.Parallel()
	exhausted := map[string]string{"alertname": "RuntimeRetriesExhausted", "runtime_name": "sample-quota-stuck", "severity": "critical"}
	watchdog := map[string]string{"alertname": "Watchdog"}
	summary := map[string]string{"summary": "Runtime sample-quota-stuck failed: retries exhausted in step WaitForShoot"}
	// post is one notification and the lines it must print.
	type post struct {
		// path of the webhook URL.
		path string
		// body is the JSON notification.
		body string
		// want are the expected lines.
		want []string
	}
	tests := []struct {
		// name describes the case.
		name string
		// posts are the notifications in order.
		posts []post
	}{
		{
			name: "firing then resolved, once per receiver; repeats print nothing",
			posts: []post{
				{path: "/oncall", body: notification("on-call", "firing", exhausted, summary), want: []string{
					"ALERT RuntimeRetriesExhausted firing -> on-call runtime=sample-quota-stuck: Runtime sample-quota-stuck failed: retries exhausted in step WaitForShoot",
				}},
				{path: "/devteam", body: notification("dev-team", "firing", exhausted, nil), want: []string{
					"ALERT RuntimeRetriesExhausted firing -> dev-team runtime=sample-quota-stuck",
				}},
				{path: "/oncall", body: notification("on-call", "firing", exhausted, summary), want: nil},
				{path: "/oncall", body: notification("on-call", "resolved", exhausted, nil), want: []string{
					"ALERT RuntimeRetriesExhausted resolved -> on-call runtime=sample-quota-stuck",
				}},
			},
		},
		{
			name: "the Watchdog heartbeat prints once",
			posts: []post{
				{path: "/deadman", body: notification("deadman", "firing", watchdog, nil), want: []string{"ALERT Watchdog firing -> deadman"}},
				{path: "/deadman", body: notification("deadman", "firing", watchdog, nil), want: nil},
			},
		},
		{
			name: "a resolve never seen firing prints nothing; without a receiver name the path names it",
			posts: []post{
				{path: "/devteam", body: notification("dev-team", "resolved", exhausted, nil), want: nil},
				{path: "/oncall", body: notification("", "firing", exhausted, nil), want: []string{"ALERT RuntimeRetriesExhausted firing -> oncall runtime=sample-quota-stuck"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				mu    sync.Mutex
				lines []string
			)
			a := NewAlertReceiver(func(l string) { mu.Lock(); defer mu.Unlock(); lines = append(lines, l) })
			for i, p := range tc.posts {
				mu.Lock()
				lines = nil
				mu.Unlock()
				rec := httptest.NewRecorder()
				a.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, p.path, strings.NewReader(p.body)))
				if rec.Code != http.StatusOK {
					t.Fatalf("post %d: status %d: %s", i, rec.Code, rec.Body)
				}
				mu.Lock()
				if !slices.Equal(lines, p.want) {
					t.Errorf("post %d: got lines %q, want %q", i, lines, p.want)
				}
				mu.Unlock()
			}
		})
	}
}

func TestAlertReceiverRejectsOtherRequests(t *testing.T) {
	t.Parallel()
	a := NewAlertReceiver(func(l string) { t.Errorf("printed %q", l) })
	for _, req := range []*http.Request{
		httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/oncall", nil),
		httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/oncall", strings.NewReader("{not json")),
	} {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			t.Errorf("%s with body: got 200, want an error", req.Method)
		}
	}
}

// notification is an Alertmanager webhook body with one alert.
func notification(receiver, status string, labels, annotations map[string]string) string {
	var b strings.Builder
	b.WriteString(`{"version":"4","receiver":"` + receiver + `","status":"` + status + `","alerts":[{"status":"` + status + `","labels":{`)
	writeMap(&b, labels)
	b.WriteString(`},"annotations":{`)
	writeMap(&b, annotations)
	b.WriteString(`}}]}`)
	return b.String()
}

func writeMap(b *strings.Builder, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + k + `":"` + m[k] + `"`)
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
