package shadow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RefusedError is a request a shadow manager refused to send, or a write it cannot even ask for
// as a dry run.
type RefusedError struct {
	Target string
	Method string
	What   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("shadow mode: %s %s on the %s refused, a shadow manager writes nothing", e.Method, e.What, e.Target)
}

// reviews are the kinds a client creates to ask a question: they persist nothing. The secure
// metrics endpoint asks them of the API server for every scrape.
var reviews = []string{"/tokenreviews", "/subjectaccessreviews", "/selfsubjectaccessreviews", "/localsubjectaccessreviews"}

// readOnly reports whether a request leaves the state of the API server it reaches as it was.
func readOnly(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	if req.URL.Query().Get("dryRun") == metav1.DryRunAll || deleteDryRun(req) {
		return true
	}
	if req.Method == http.MethodPost {
		for _, r := range reviews {
			if strings.HasSuffix(req.URL.Path, r) {
				return true
			}
		}
	}
	return false
}

// Guard returns a transport wrapper, for rest.Config.Wrap, that sends only requests that change
// nothing (reads, dry runs, access reviews) to target and refuses any other with a
// *RefusedError, which it counts in the Recorder's refused requests.
func (r *Recorder) Guard(target string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return guard{next: next, target: target, r: r}
	}
}

type guard struct {
	next   http.RoundTripper
	target string
	r      *Recorder
}

func (g guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if readOnly(req) {
		return g.next.RoundTrip(req) //nolint:wrapcheck // a transport passes the reply on as it is.
	}
	if req.Body != nil {
		_ = req.Body.Close()
	}
	g.r.refused.WithLabelValues(g.target).Inc()
	return nil, &RefusedError{Target: g.target, Method: req.Method, What: req.URL.Path}
}

// maxDeleteBody bounds the body of a delete the guard reads: DeleteOptions are a few hundred bytes.
const maxDeleteBody = 64 << 10

// protobufMagic starts a Kubernetes protobuf body.
var protobufMagic = []byte("k8s\x00")

// deleteDryRun reports whether req is a delete whose body, its DeleteOptions, asks for a dry
// run: a client sends a delete's options in its body, not in the query. The body is read and put
// back for the request to send.
func deleteDryRun(req *http.Request) bool {
	if req.Method != http.MethodDelete || req.Body == nil {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, maxDeleteBody+1))
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	if err != nil || len(data) > maxDeleteBody {
		// A body cut short is no request to send: it is refused whole.
		return false
	}
	var opts metav1.DeleteOptions
	if raw, ok := bytes.CutPrefix(data, protobufMagic); ok {
		// Protobuf, for the built-in kinds: an envelope (runtime.Unknown) around the options.
		var envelope runtime.Unknown
		if envelope.Unmarshal(raw) != nil || opts.Unmarshal(envelope.Raw) != nil {
			return false
		}
	} else if json.Unmarshal(data, &opts) != nil {
		return false
	}
	return slices.Equal(opts.DryRun, []string{metav1.DryRunAll})
}
