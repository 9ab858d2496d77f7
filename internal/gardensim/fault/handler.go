package fault

import (
	"net/http"
	"time"
)

// Handler injects the faults inj decides into requests on their way to next,
// the real API. onHit, if not nil, is told about every injected fault.
func Handler(inj *Injector, next http.Handler, onHit func(Request, Hit)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestFor(r)
		hit, ok := inj.Decide(req)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if onHit != nil {
			onHit(req, hit)
		}
		if hit.Fault.Delay != nil && !wait(r, hit.Fault.Delay.Duration) {
			return
		}
		apply(w, r, req, hit, next)
	})
}

// apply performs the fault of hit.
func apply(w http.ResponseWriter, r *http.Request, req Request, hit Hit, next http.Handler) {
	switch hit.Fault.Type {
	case TypeStatus:
		writeStatusFault(w, req, hit)
	case TypeDrop:
		drop(w, r)
	case TypeDropReply:
		next.ServeHTTP(&recorder{header: http.Header{}}, r)
		drop(w, r)
	case TypeMalformed:
		writeMalformed(w, req)
	case TypeWrongKind:
		writeWrongKind(w, req)
	case TypeNoStatus:
		forwardWithoutStatus(w, r, req, next)
	default:
		next.ServeHTTP(w, r)
	}
}

// wait blocks for d or until the client gives up; it reports whether the
// request is still wanted.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
