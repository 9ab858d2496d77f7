package gardenclient

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
)

// TestInstrumentCountsByVerbAndCode sends requests through an instrumented config and reads
// the counter back.
func TestInstrumentCountsByVerbAndCode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "test_requests_total"}, []string{"verb", "code"})
	cfg := &rest.Config{Host: srv.URL}
	Instrument(cfg, requests)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]float64{
		"get/200":    testutil.ToFloat64(requests.WithLabelValues("get", "200")),
		"watch/200":  testutil.ToFloat64(requests.WithLabelValues("watch", "200")),
		"delete/503": testutil.ToFloat64(requests.WithLabelValues("delete", "503")),
	}
	for _, r := range []struct{ method, query string }{{http.MethodGet, ""}, {http.MethodGet, "watch=true"}, {http.MethodDelete, ""}} {
		req, err := http.NewRequestWithContext(t.Context(), r.method, srv.URL+"/apis?"+r.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	for key, labels := range map[string][2]string{"get/200": {"get", "200"}, "watch/200": {"watch", "200"}, "delete/503": {"delete", "503"}} {
		got := testutil.ToFloat64(requests.WithLabelValues(labels[0], labels[1])) - before[key]
		if got != 1 {
			t.Errorf("%s: counted %v, want 1", key, got)
		}
	}
}
