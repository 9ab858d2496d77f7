package gardenclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestRequestTimeout bounds a request that Gardener answers too slowly, and leaves a watch,
// which stays open by design, alone.
func TestRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(release)
	cfg := &rest.Config{Host: srv.URL}
	WithRequestTimeout(cfg, 50*time.Millisecond)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	if err := get(srv.URL + "/apis/core.gardener.cloud/v1beta1/shoots"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow request: error = %v, want the request's deadline", err)
	}
	go func() { time.Sleep(300 * time.Millisecond); release <- struct{}{} }()
	if err := get(srv.URL + "/apis/core.gardener.cloud/v1beta1/shoots?watch=true"); err != nil {
		t.Errorf("watch: error = %v, want none: a watch has no request deadline", err)
	}
}
