package proxy

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// DefaultRequestLogSize is how many requests a RequestLog keeps by default.
const DefaultRequestLogSize = 100_000

// RequestRecord is one request the front proxy answered (or dropped).
type RequestRecord struct {
	// Seq numbers the records from 1 in the order the requests ended.
	Seq uint64 `json:"seq"`
	// Time is when the request arrived at the proxy, before any fault.
	Time time.Time `json:"time"`
	// Verb is the Kubernetes verb, or adminkubeconfig (see fault.RequestFor).
	Verb string `json:"verb"`
	// Group, Resource and Subresource say what the request is about.
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	// Namespace and Name come from the path; a create by POST has no name in its path.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Code is the status the client was answered; 0 when the connection was dropped without one.
	Code int `json:"code"`
}

// RequestPage is a slice of the log, as Since returns it.
type RequestPage struct {
	// Records are the records after the asked sequence number, oldest first.
	Records []RequestRecord `json:"records"`
	// Next is the sequence number to ask for next: the last record's, or the asked one.
	Next uint64 `json:"next"`
	// Dropped counts the records after the asked sequence number that the log no longer holds.
	Dropped uint64 `json:"dropped"`
}

// RequestLog keeps the last requests of the proxy in a ring, so that a test can correlate
// what reached Gardener with what the client believed at the time. It is safe for concurrent
// use.
type RequestLog struct {
	mu   sync.Mutex
	ring []RequestRecord
	last uint64 // sequence number of the newest record
}

// NewRequestLog returns a log that keeps the last size requests; size <= 0 means
// DefaultRequestLogSize.
func NewRequestLog(size int) *RequestLog {
	if size <= 0 {
		size = DefaultRequestLogSize
	}
	return &RequestLog{ring: make([]RequestRecord, size)}
}

// add appends a record, giving it the next sequence number.
func (l *RequestLog) add(rec RequestRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	rec.Seq = l.last
	l.ring[(l.last-1)%uint64(len(l.ring))] = rec
}

// Since returns up to limit records with a sequence number above after (limit <= 0: all held).
func (l *RequestLog) Since(after uint64, limit int) RequestPage {
	l.mu.Lock()
	defer l.mu.Unlock()
	page := RequestPage{Records: []RequestRecord{}, Next: after}
	if after >= l.last {
		return page
	}
	size := uint64(len(l.ring))
	first := after + 1
	if l.last > size && first <= l.last-size {
		oldest := l.last - size + 1
		page.Dropped = oldest - first
		first = oldest
	}
	for seq := first; seq <= l.last; seq++ {
		if limit > 0 && len(page.Records) >= limit {
			break
		}
		page.Records = append(page.Records, l.ring[(seq-1)%size])
		page.Next = seq
	}
	return page
}

// Handler records every request that next serves: its arrival time, what it is about, and the
// status it was answered.
func (l *RequestLog) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		req := fault.RequestFor(r)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			l.add(RequestRecord{
				Time: arrived, Verb: req.Verb, Group: req.Group, Resource: req.Resource, Subresource: req.Subresource,
				Namespace: req.Namespace, Name: req.Name, Code: sw.code,
			})
		}()
		next.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status written through it. Unwrap lets http.ResponseController
// (which the reverse proxy flushes watches with) reach the connection's own writer.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b) //nolint:wrapcheck // a ResponseWriter's error, passed on as is.
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes flushes on, for handlers that assert http.Flusher directly.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.code == 0 {
			w.code = http.StatusOK
		}
		f.Flush()
	}
}

// Hijack passes hijacking on, for the Drop fault's fallback on HTTP/1.1.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response writer cannot be hijacked")
	}
	return hj.Hijack() //nolint:wrapcheck // the server's own error, passed on as is.
}
