package gardensim_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// faultTarget is the shoot the fault tests read and write; it hangs in its
// Create so that it has a status but no cluster.
const faultTarget = "fault-target"

// TestFaults checks that every fault kind reaches the manager's client as
// the error it would get from a real Gardener in the same situation.
func TestFaults(t *testing.T) {
	setLifecycleRules(t, lifecycle.Rule{
		Name: "hang", Shoot: faultTarget, Outcome: lifecycle.OutcomeHang,
		Operations: []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate},
	})
	if err := direct.Create(t.Context(), newShoot(faultTarget)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { confirmAndDelete(t, faultTarget) })
	waitForOperation(t, faultTarget, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing)

	tests := []struct {
		name  string                      // case name
		rule  fault.Rule                  // the only fault rule while the case runs
		call  func(context.Context) error // what the manager does
		check func(*testing.T, error)     // what it must see
		hits  int                         // how often the rule must have fired
	}{
		{
			name: "500 is an internal error",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeStatus, Code: 500}),
			call: getTarget(nil), check: is(apierrors.IsInternalError), hits: 1,
		},
		{
			name: "503 is service unavailable",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeStatus, Code: 503}),
			call: getTarget(nil), check: is(apierrors.IsServiceUnavailable), hits: 1,
		},
		{
			name: "429 is too many requests and asks for a delay",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeStatus, Code: 429, RetryAfterSeconds: 3, RetryAfterHeader: ptr.To(false)}),
			call: getTarget(nil), hits: 1,
			check: func(t *testing.T, err error) {
				if !apierrors.IsTooManyRequests(err) {
					t.Fatalf("error = %v, want TooManyRequests", err)
				}
				if s, ok := apierrors.SuggestsClientDelay(err); !ok || s != 3 {
					t.Errorf("SuggestsClientDelay = %d, %v; want 3, true", s, ok)
				}
			},
		},
		{
			name: "429 with Retry-After is absorbed by client-go's own retry",
			rule: withCount(rule([]string{"get"}, fault.Fault{Type: fault.TypeStatus, Code: 429}), 1),
			call: getTarget(nil), check: is(nil), hits: 1,
		},
		{
			name: "403 is forbidden",
			rule: rule([]string{"update"}, fault.Fault{Type: fault.TypeStatus, Code: 403}),
			call: updateTarget, check: is(apierrors.IsForbidden), hits: 1,
		},
		{
			name: "409 is a conflict",
			rule: rule([]string{"update"}, fault.Fault{Type: fault.TypeStatus, Code: 409}),
			call: updateTarget, check: is(apierrors.IsConflict), hits: 1,
		},
		{
			name: "a dropped connection is a connection error",
			rule: rule([]string{"update"}, fault.Fault{Type: fault.TypeDrop}),
			call: updateTarget, check: connectionError, hits: 1,
		},
		{
			name: "latency delays the reply",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeLatency, Delay: &metav1.Duration{Duration: 300 * time.Millisecond}}),
			call: timed(getTarget(nil), 300*time.Millisecond), check: is(nil), hits: 1,
		},
		{
			name: "a malformed body is a decode error",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeMalformed}),
			call: getTarget(nil), check: decodeError, hits: 1,
		},
		{
			name: "a reply of the wrong kind is an error",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeWrongKind}),
			call: getTarget(nil), check: unregisteredKind, hits: 1,
		},
		{
			name: "a shoot without status decodes with an empty status",
			rule: rule([]string{"get"}, fault.Fault{Type: fault.TypeNoStatus}),
			call: getTarget(func(s *gardencorev1beta1.Shoot) error {
				if s.Status.LastOperation != nil || s.Status.TechnicalID != "" || s.Spec.Region == "" {
					return errors.New("status was not stripped, or the spec was lost")
				}
				return nil
			}),
			check: is(nil), hits: 1,
		},
		{
			name: "faults reach admin kubeconfig requests",
			rule: rule([]string{fault.VerbAdminKubeconfig}, fault.Fault{Type: fault.TypeStatus, Code: 503}),
			call: func(ctx context.Context) error {
				_, err := adminKubeconfig(ctx, faultTarget, 3600)
				return err
			},
			check: is(apierrors.IsServiceUnavailable), hits: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := sim.SetFaults([]fault.Rule{tc.rule}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sim.SetFaults(nil) })
			tc.check(t, tc.call(t.Context()))
			if got := sim.FaultRules()[0].Hits; got != tc.hits {
				t.Errorf("rule fired %d times, want %d", got, tc.hits)
			}
		})
	}
}

// TestFaultsOnListAndWatch checks faults on collection requests.
func TestFaultsOnListAndWatch(t *testing.T) {
	tests := []struct {
		name  string                      // case name
		rule  fault.Rule                  // the only fault rule while the case runs
		call  func(context.Context) error // what the manager does
		check func(*testing.T, error)     // what it must see
	}{
		{
			name: "a list of the wrong kind is an error",
			rule: fault.Rule{Match: fault.Match{Verbs: []string{"list"}, Resource: "shoots"}, Fault: fault.Fault{Type: fault.TypeWrongKind}},
			call: func(ctx context.Context) error {
				return garden.List(ctx, &gardencorev1beta1.ShootList{}, client.InNamespace(namespace))
			},
			check: unregisteredKind,
		},
		{
			name: "a refused watch is the status error",
			rule: fault.Rule{Match: fault.Match{Verbs: []string{"watch"}, Resource: "shoots"}, Fault: fault.Fault{Type: fault.TypeStatus, Code: 500}},
			call: func(ctx context.Context) error {
				w, err := garden.Watch(ctx, &gardencorev1beta1.ShootList{}, client.InNamespace(namespace))
				if err == nil {
					w.Stop()
				}
				return err
			},
			check: is(apierrors.IsInternalError),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := sim.SetFaults([]fault.Rule{tc.rule}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sim.SetFaults(nil) })
			tc.check(t, tc.call(t.Context()))
		})
	}
}

// rule returns a rule for the fault target's requests with the given verbs.
func rule(verbs []string, f fault.Fault) fault.Rule {
	return fault.Rule{Name: "test", Match: fault.Match{Verbs: verbs, Resource: "shoots", Namespace: namespace, Name: faultTarget}, Fault: f}
}

func withCount(r fault.Rule, n int) fault.Rule {
	r.Count = n
	return r
}

// getTarget reads the fault target and checks it with check, if given.
func getTarget(check func(*gardencorev1beta1.Shoot) error) func(context.Context) error {
	return func(ctx context.Context) error {
		s := &gardencorev1beta1.Shoot{}
		if err := garden.Get(ctx, client.ObjectKey{Namespace: namespace, Name: faultTarget}, s); err != nil {
			return err
		}
		if check != nil {
			return check(s)
		}
		return nil
	}
}

// updateTarget writes the fault target back unchanged.
func updateTarget(ctx context.Context) error {
	s := &gardencorev1beta1.Shoot{}
	if err := direct.Get(ctx, client.ObjectKey{Namespace: namespace, Name: faultTarget}, s); err != nil {
		return err
	}
	return garden.Update(ctx, s)
}

// timed fails the call if it returns sooner than least.
func timed(call func(context.Context) error, least time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		began := time.Now()
		if err := call(ctx); err != nil {
			return err
		}
		if d := time.Since(began); d < least {
			return errors.New("reply came after " + d.String() + ", sooner than the injected latency")
		}
		return nil
	}
}

// is checks err with class; a nil class wants no error.
func is(class func(error) bool) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if class == nil {
			if err != nil {
				t.Fatalf("error = %v, want none", err)
			}
			return
		}
		if !class(err) {
			t.Fatalf("error = %v (%T), not of the expected class", err, err)
		}
	}
}

func connectionError(t *testing.T, err error) {
	t.Helper()
	var netErr net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) ||
		utilnet.IsProbableEOF(err) || utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) {
		t.Logf("client error: %v", err)
		return
	}
	t.Fatalf("error = %v (%T), want a connection error", err, err)
}

// decodeError wants an error that is neither an API status nor a
// connection error: client-go reports undecodable JSON as a plain error.
func decodeError(t *testing.T, err error) {
	t.Helper()
	notAPIStatus(t, err)
	var netErr net.Error
	if errors.Is(err, io.EOF) || errors.As(err, &netErr) {
		t.Fatalf("error = %v, a connection error instead of a decode error", err)
	}
	if c := retry.Classify(err); c.Reason != retry.ReasonMalformedResponse {
		t.Fatalf("error = %v classified as %+v, want reason %s", err, c, retry.ReasonMalformedResponse)
	}
}

// unregisteredKind wants the error of a reply whose kind the client's
// scheme does not know.
func unregisteredKind(t *testing.T, err error) {
	t.Helper()
	if !runtime.IsNotRegisteredError(err) {
		t.Fatalf("error = %v (%T), want a not-registered kind", err, err)
	}
}

func notAPIStatus(t *testing.T, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) {
		t.Fatalf("error = %v (%T), want a non-API error", err, err)
	}
	t.Logf("client error: %v (%T)", err, err)
}
