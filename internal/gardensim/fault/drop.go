package fault

import (
	"context"
	"net"
	"net/http"
)

type connKey struct{}

// ConnContext is meant for http.Server.ConnContext: it remembers each
// request's network connection so that a Drop fault can close it, which works
// for HTTP/2 (where hijacking is impossible) as well as for HTTP/1.1.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// drop closes the client's connection without an answer: the client sees
// the connection end (EOF, unexpected EOF or a reset), as when a load
// balancer or the API server goes away mid-request.
func drop(w http.ResponseWriter, r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
		_ = c.Close()
		return
	}
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
