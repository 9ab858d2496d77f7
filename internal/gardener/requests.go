package gardener

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	requestsOnce sync.Once
	requests     *prometheus.CounterVec
)

// requestsTotal is infrastructure_manager_gardener_requests_total{verb,code}, registered with
// controller-runtime's registry on first use. code is the HTTP status, or "error" when no reply
// arrived.
func requestsTotal() *prometheus.CounterVec {
	requestsOnce.Do(func() {
		requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "infrastructure_manager_gardener_requests_total",
			Help: "Requests to the Gardener API by verb and HTTP status code (\"error\" when no reply arrived).",
		}, []string{"verb", "code"})
		ctrlmetrics.Registry.MustRegister(requests)
	})
	return requests
}

// Instrument makes every request through cfg count in gardener_requests_total.
func Instrument(cfg *rest.Config) {
	counter := requestsTotal()
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			code := "error"
			if err == nil {
				code = strconv.Itoa(resp.StatusCode)
			}
			counter.WithLabelValues(verb(req), code).Inc()
			return resp, err //nolint:wrapcheck // a RoundTripper passes its transport's error through unchanged.
		})
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// verb names a request by its HTTP method, from a fixed set.
func verb(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Get("watch") == "true" {
			return "watch"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return "other"
}
