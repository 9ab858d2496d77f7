package gardenclient

import (
	"context"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// WithRequestTimeout bounds every Gardener request made through cfg by d, as upstream's
// --gardener-request-timeout does, except watches, which the shoot cache holds open for as long
// as they last. The deadline covers reading the reply too. Zero leaves cfg alone.
func WithRequestTimeout(cfg *rest.Config, d time.Duration) {
	if d <= 0 {
		return
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return timeoutTransport{next: rt, timeout: d} })
}

// timeoutTransport gives each non-watch request a deadline.
type timeoutTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" {
		return t.next.RoundTrip(req) //nolint:wrapcheck // A transport passes its errors on as they are.
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err //nolint:wrapcheck // A transport passes its errors on as they are.
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a request's deadline when its reply is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close implements io.Closer.
func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close() //nolint:wrapcheck // As the body it wraps.
}
