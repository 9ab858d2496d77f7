package v1_test

import (
	"strings"
	"testing"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

func TestPendingRetryRequest(t *testing.T) {
	const (
		name = "example.test/retry-requested-at"
		t1   = "2026-01-01T00:05:00Z"
		t2   = "2026-01-01T00:06:00Z"
		t3   = "2026-01-01T00:07:00.123456789+02:00"
	)
	long := t1 + strings.Repeat(" ", 100)
	tests := []struct {
		name        string            // the situation
		annotations map[string]string // the object's annotations
		annotation  string            // the name the object's API gives the annotation
		handled     string            // status.retryRequestedAt
		want        string            // the request returned
		pending     bool              // whether the engine has still to take it
	}{
		{name: "no annotation", annotation: name},
		{name: "a new request", annotations: map[string]string{name: t1}, annotation: name, want: t1, pending: true},
		{name: "a request handled", annotations: map[string]string{name: t1}, annotation: name, handled: t1, want: t1},
		{name: "a request after one handled", annotations: map[string]string{name: t2}, annotation: name, handled: t1, want: t2, pending: true},
		{name: "a request with nanoseconds and an offset", annotations: map[string]string{name: t3}, annotation: name, want: t3, pending: true},
		{name: "another annotation", annotations: map[string]string{"other": t1}, annotation: name},
		{name: "no annotation named", annotations: map[string]string{"": t1}},
		// Anything but a time would be echoed into the status as it is: it asks for nothing.
		{name: "a word", annotations: map[string]string{name: "again"}, annotation: name, want: "again"},
		{name: "a date without a time", annotations: map[string]string{name: "2026-01-01"}, annotation: name, want: "2026-01-01"},
		{name: "a day that does not exist", annotations: map[string]string{name: "2026-02-31T00:00:00Z"}, annotation: name, want: "2026-02-31T00:00:00Z"},
		{name: "a time with a long tail", annotations: map[string]string{name: long}, annotation: name, want: long},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &fsmv1.EngineStatus{RetryRequestedAt: tc.handled}
			got, pending := st.PendingRetryRequest(tc.annotations, tc.annotation)
			if got != tc.want || pending != tc.pending {
				t.Errorf("got %q, %v; want %q, %v", got, pending, tc.want, tc.pending)
			}
		})
	}
}
