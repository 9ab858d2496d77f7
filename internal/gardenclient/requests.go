package gardenclient

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// Instrument makes every request through cfg count in requests, by verb and code (the
// metrics package's GardenerRequests). code is the HTTP status, or "error" when no reply arrived.
func Instrument(cfg *rest.Config, requests *prometheus.CounterVec) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			code := "error"
			if err == nil {
				code = strconv.Itoa(resp.StatusCode)
			}
			requests.WithLabelValues(verb(req), code).Inc()
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
