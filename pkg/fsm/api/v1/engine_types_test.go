package v1_test

import (
	"testing"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

func TestPendingRetryRequest(t *testing.T) {
	const name = "example.test/retry-requested-at"
	tests := []struct {
		name        string            // the situation
		annotations map[string]string // the object's annotations
		annotation  string            // the name the object's API gives the annotation
		handled     string            // status.retryRequestedAt
		want        string            // the request returned
		pending     bool              // whether the engine has still to take it
	}{
		{name: "no annotation", annotation: name},
		{name: "a new request", annotations: map[string]string{name: "t1"}, annotation: name, want: "t1", pending: true},
		{name: "a request handled", annotations: map[string]string{name: "t1"}, annotation: name, handled: "t1", want: "t1"},
		{name: "a request after one handled", annotations: map[string]string{name: "t2"}, annotation: name, handled: "t1", want: "t2", pending: true},
		{name: "another annotation", annotations: map[string]string{"other": "t1"}, annotation: name},
		{name: "no annotation named", annotations: map[string]string{"": "t1"}},
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
