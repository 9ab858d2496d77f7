package fault

import (
	"errors"
	"fmt"
	"net/http"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Type is the kind of failure a rule injects.
type Type string

const (
	// TypeStatus answers with an error status and a metav1.Status body.
	TypeStatus Type = "Status"
	// TypeLatency only delays the request, which then proceeds normally.
	TypeLatency Type = "Latency"
	// TypeDrop closes the client's connection without an answer.
	TypeDrop Type = "Drop"
	// TypeDropReply forwards the request, so it takes effect, then closes the client's
	// connection instead of answering: a reply lost on the way back.
	TypeDropReply Type = "DropReply"
	// TypeMalformed answers 200 with a body that is not valid JSON.
	TypeMalformed Type = "Malformed"
	// TypeWrongKind answers 200 with a ConfigMap (or ConfigMapList) instead
	// of the requested object.
	TypeWrongKind Type = "WrongKind"
	// TypeNoStatus forwards the request and strips .status from the reply.
	TypeNoStatus Type = "NoStatus"
)

// Rule selects requests and says which fault they get. The zero values of
// the optional fields mean: every request, always, no limit, from now on,
// forever.
type Rule struct {
	// Name identifies the rule in the admin API and in logs.
	Name string `json:"name,omitempty"`
	// Match selects the requests the rule applies to.
	Match Match `json:"match,omitempty"`
	// Probability in [0, 1] that a matching request is hit; unset means 1.
	Probability *float64 `json:"probability,omitempty"`
	// Count limits the rule to its first Count hits; zero means no limit.
	Count int `json:"count,omitempty"`
	// After delays the start of the rule, counted from when it was set.
	After *metav1.Duration `json:"after,omitempty"`
	// For ends the rule this long after it started; unset means never.
	For *metav1.Duration `json:"for,omitempty"`
	// Fault is what a hit request gets.
	Fault Fault `json:"fault"`
}

// Match selects requests; every field is optional and an empty one matches
// everything. Patterns are globs as in path.Match.
type Match struct {
	// Verbs are Kubernetes verbs (get, list, watch, create, update, patch,
	// delete, deletecollection) plus adminkubeconfig for the
	// shoots/adminkubeconfig subresource.
	Verbs []string `json:"verbs,omitempty"`
	// Resource is a glob on the resource ("shoots"); with a slash it is
	// matched against resource/subresource ("shoots/status"), without one a
	// match on the resource covers its subresources too.
	Resource string `json:"resource,omitempty"`
	// Namespace is a glob on the request's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Name is a glob on the object name in the request path.
	Name string `json:"name,omitempty"`
}

// Fault describes one failure.
type Fault struct {
	// Type is the kind of failure.
	Type Type `json:"type"`
	// Code is the HTTP status of a Status fault.
	Code int `json:"code,omitempty"`
	// Codes, if set instead of Code, are picked from uniformly at random.
	Codes []int `json:"codes,omitempty"`
	// RetryAfterSeconds goes into details.retryAfterSeconds and the
	// Retry-After header; 429 defaults to 1.
	RetryAfterSeconds int32 `json:"retryAfterSeconds,omitempty"`
	// RetryAfterHeader can suppress the Retry-After header (client-go
	// retries a 429 or 5xx that carries one up to ten times by itself);
	// unset means the header is sent whenever RetryAfterSeconds is set.
	RetryAfterHeader *bool `json:"retryAfterHeader,omitempty"`
	// Delay is waited before the fault happens; for TypeLatency it is the
	// whole fault.
	Delay *metav1.Duration `json:"delay,omitempty"`
	// Message replaces the default message of a Status fault.
	Message string `json:"message,omitempty"`
}

// Validate reports the first problem of a rule, if any.
func (r Rule) Validate() error {
	if r.Probability != nil && (*r.Probability < 0 || *r.Probability > 1) {
		return fmt.Errorf("rule %q: probability %v is outside [0, 1]", r.Name, *r.Probability)
	}
	if r.Count < 0 {
		return fmt.Errorf("rule %q: negative count %d", r.Name, r.Count)
	}
	for _, glob := range []string{r.Match.Resource, r.Match.Namespace, r.Match.Name} {
		if _, err := path.Match(glob, ""); err != nil {
			return fmt.Errorf("rule %q: pattern %q: %w", r.Name, glob, err)
		}
	}
	if err := r.Fault.validate(); err != nil {
		return fmt.Errorf("rule %q: %w", r.Name, err)
	}
	return nil
}

func (f Fault) validate() error {
	switch f.Type {
	case TypeStatus:
		codes := f.codes()
		if len(codes) == 0 {
			return errors.New("a Status fault needs a code")
		}
		for _, c := range codes {
			if c < 400 || c > 599 {
				return fmt.Errorf("status code %d is not an error code", c)
			}
		}
	case TypeLatency:
		if f.Delay == nil || f.Delay.Duration <= 0 {
			return errors.New("a Latency fault needs a positive delay")
		}
	case TypeDrop, TypeDropReply, TypeMalformed, TypeWrongKind, TypeNoStatus:
	default:
		return fmt.Errorf("unknown fault type %q", f.Type)
	}
	return nil
}

// retryAfterSeconds is the delay the client is asked to wait.
func (f Fault) retryAfterSeconds(code int) int32 {
	if f.RetryAfterSeconds == 0 && code == http.StatusTooManyRequests {
		return 1
	}
	return f.RetryAfterSeconds
}

// sendsRetryAfterHeader reports whether the Retry-After header is set.
func (f Fault) sendsRetryAfterHeader(code int) bool {
	if f.RetryAfterHeader != nil && !*f.RetryAfterHeader {
		return false
	}
	return f.retryAfterSeconds(code) > 0
}

// codes lists the status codes a Status fault picks from.
func (f Fault) codes() []int {
	if f.Code != 0 {
		return append([]int{f.Code}, f.Codes...)
	}
	return f.Codes
}
