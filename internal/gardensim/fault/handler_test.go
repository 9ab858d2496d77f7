package fault

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upstream plays the garden API: it answers every request with a shoot.
var upstream = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"kind":"Shoot","apiVersion":"core.gardener.cloud/v1beta1","metadata":{"name":"s"},"spec":{"region":"r"},"status":{"technicalID":"t"}}`)
})

func TestHandler(t *testing.T) {
	tests := []struct {
		name  string                                                       // case name
		fault Fault                                                        // the fault of the only rule
		check func(t *testing.T, resp *http.Response, body map[string]any) // what the client gets
	}{
		{
			name:  "429 carries Retry-After and a Status with details",
			fault: Fault{Type: TypeStatus, Code: 429, RetryAfterSeconds: 7},
			check: check429WithHeader,
		},
		{
			name:  "429 without header on request",
			fault: Fault{Type: TypeStatus, Code: 429, RetryAfterHeader: new(bool)},
			check: check429WithoutHeader,
		},
		{
			name:  "409 is a Conflict status naming the object",
			fault: Fault{Type: TypeStatus, Code: 409},
			check: checkConflict,
		},
		{
			name:  "wrong kind is a ConfigMap",
			fault: Fault{Type: TypeWrongKind},
			check: checkWrongKind,
		},
		{
			name:  "no status keeps the rest",
			fault: Fault{Type: TypeNoStatus},
			check: checkNoStatus,
		},
		{
			name:  "latency then the real reply",
			fault: Fault{Type: TypeLatency, Delay: &metav1.Duration{Duration: 50 * time.Millisecond}},
			check: checkLatency,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := serveOnce(t, tc.fault)
			var obj map[string]any
			if err := json.Unmarshal(body, &obj); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, body)
			}
			tc.check(t, resp, obj)
		})
	}
}

// check429WithHeader wants a 429 with Retry-After and a Status with details.
func check429WithHeader(t *testing.T, resp *http.Response, body map[string]any) {
	t.Helper()
	details, _ := body["details"].(map[string]any)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || body["reason"] != "TooManyRequests" || details["retryAfterSeconds"] != 7.0 {
		t.Errorf("got %d %v %v", resp.StatusCode, resp.Header, body)
	}
}

// check429WithoutHeader wants a Status without the Retry-After header.
func check429WithoutHeader(t *testing.T, resp *http.Response, body map[string]any) {
	t.Helper()
	if resp.Header.Get("Retry-After") != "" || body["kind"] != "Status" {
		t.Errorf("got %v %v", resp.Header, body)
	}
}

// checkConflict wants a Conflict status naming the object.
func checkConflict(t *testing.T, resp *http.Response, body map[string]any) {
	t.Helper()
	if resp.StatusCode != 409 || body["reason"] != "Conflict" || !strings.Contains(body["message"].(string), `shoots.core.gardener.cloud "s"`) {
		t.Errorf("got %d %v", resp.StatusCode, body)
	}
}

// checkWrongKind wants a 200 carrying a ConfigMap.
func checkWrongKind(t *testing.T, resp *http.Response, body map[string]any) {
	t.Helper()
	if resp.StatusCode != 200 || body["kind"] != "ConfigMap" {
		t.Errorf("got %d %v", resp.StatusCode, body)
	}
}

// checkNoStatus wants the reply without its status.
func checkNoStatus(t *testing.T, _ *http.Response, body map[string]any) {
	t.Helper()
	if _, has := body["status"]; has || body["spec"] == nil {
		t.Errorf("got %v", body)
	}
}

// checkLatency wants the real reply.
func checkLatency(t *testing.T, resp *http.Response, body map[string]any) {
	t.Helper()
	if resp.StatusCode != 200 || body["status"] == nil {
		t.Errorf("got %d %v", resp.StatusCode, body)
	}
}

func TestHandlerBrokenReplies(t *testing.T) {
	t.Run("malformed body is not JSON", func(t *testing.T) {
		_, body := serveOnce(t, Fault{Type: TypeMalformed})
		if json.Valid(body) {
			t.Errorf("body is valid JSON: %s", body)
		}
	})
	t.Run("drop closes the connection", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(handlerWith(t, Fault{Type: TypeDrop}))
		srv.Config.ConnContext = ConnContext
		srv.Start()
		defer srv.Close()
		resp, err := srv.Client().Get(srv.URL + "/apis/core.gardener.cloud/v1beta1/namespaces/n/shoots/s")
		if err == nil {
			_ = resp.Body.Close()
			t.Fatalf("got a reply %d, want a broken connection", resp.StatusCode)
		}
	})
}

// TestHandlerDropReplyForwardsFirst: the request reaches the real API (a create takes effect),
// and only the reply is lost.
func TestHandlerDropReplyForwardsFirst(t *testing.T) {
	var forwarded atomic.Int32
	inj := NewInjector()
	if err := inj.SetRules([]Rule{{Fault: Fault{Type: TypeDropReply}}}); err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		upstream.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(Handler(inj, next, nil))
	srv.Config.ConnContext = ConnContext
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/apis/core.gardener.cloud/v1beta1/namespaces/n/shoots", "application/json", strings.NewReader("{}"))
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("got a reply %d, want a broken connection", resp.StatusCode)
	}
	if forwarded.Load() != 1 {
		t.Errorf("the request reached the API %d times, want 1", forwarded.Load())
	}
}

func handlerWith(t *testing.T, f Fault) http.Handler {
	t.Helper()
	inj := NewInjector()
	if err := inj.SetRules([]Rule{{Fault: f}}); err != nil {
		t.Fatal(err)
	}
	return Handler(inj, upstream, nil)
}

func serveOnce(t *testing.T, f Fault) (*http.Response, []byte) {
	t.Helper()
	srv := httptest.NewServer(handlerWith(t, f))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/apis/core.gardener.cloud/v1beta1/namespaces/n/shoots/s", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
