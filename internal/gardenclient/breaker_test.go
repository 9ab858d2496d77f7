package gardenclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestBreaker walks the breaker through its states against a server whose answer the test sets.
func TestBreaker(t *testing.T) {
	var code atomic.Int32
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.WriteHeader(int(code.Load()))
	}))
	defer srv.Close()
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_circuit_state"})
	b := NewBreaker(BreakerConfig{Threshold: 3, Cooldown: 30 * time.Second, Clock: clock, Gauge: gauge})
	cfg := &rest.Config{Host: srv.URL}
	b.Wrap(cfg)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	call := func() error {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	expect := func(step string, state int) {
		t.Helper()
		if b.State() != state || testutil.ToFloat64(gauge) != float64(state) {
			t.Fatalf("%s: state %d, gauge %v, want %d", step, b.State(), testutil.ToFloat64(gauge), state)
		}
	}

	code.Store(http.StatusTooManyRequests)
	for range 5 {
		_ = call()
	}
	expect("429 is an answer, not an outage", CircuitClosed)

	code.Store(http.StatusServiceUnavailable)
	_ = call()
	_ = call()
	code.Store(http.StatusOK)
	_ = call()
	code.Store(http.StatusServiceUnavailable)
	_ = call()
	_ = call()
	expect("a success in between resets the count", CircuitClosed)
	if err := call(); retry.Classify(err).Class != retry.ClassPaused {
		t.Errorf("the failure that opens the circuit returned %v, want a Paused refusal", err)
	}
	expect("three failures in a row open it", CircuitOpen)

	before := served.Load()
	err = call()
	if !errors.Is(err, ErrCircuitOpen) || served.Load() != before {
		t.Fatalf("an open breaker let a call through (err %v)", err)
	}
	if c := retry.Classify(err); c.Class != retry.ClassPaused || c.RetryAfter != 30*time.Second {
		t.Errorf("refusal classified as %+v, want Paused for the 30s cooldown", c)
	}

	clock.Step(30 * time.Second)
	_ = call()
	expect("a failed probe opens it again", CircuitOpen)

	clock.Step(30 * time.Second)
	code.Store(http.StatusOK)
	if err := call(); err != nil {
		t.Fatal(err)
	}
	expect("a successful probe closes it", CircuitClosed)
}

// TestBreakerWithoutThreshold disables the breaker with a zero threshold: a long run of 503
// replies reaches the caller as 503 replies, every call reaches the server, and the circuit,
// the engines' gate, stays closed.
func TestBreakerWithoutThreshold(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_disabled_circuit_state"})
	b := NewBreaker(BreakerConfig{Threshold: 0, Cooldown: 30 * time.Second, Gauge: gauge})
	cfg := &rest.Config{Host: srv.URL}
	b.Wrap(cfg)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const calls = 50
	for i := range calls {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("call %d: %v, want the 503 reply", i+1, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("call %d: status %d, want 503", i+1, resp.StatusCode)
		}
	}
	if served.Load() != calls || b.State() != CircuitClosed || !b.Open() || testutil.ToFloat64(gauge) != CircuitClosed {
		t.Errorf("served %d of %d calls, state %d, gate open %t, gauge %v; want all, closed, open, 0",
			served.Load(), calls, b.State(), b.Open(), testutil.ToFloat64(gauge))
	}
	if b.ProbeDue() {
		t.Error("a disabled breaker wants a probe")
	}
}

// TestProberClosesAnIdleCircuit opens the circuit, lets Gardener recover, and makes no call of
// its own: the prober probes once the cooldown has passed, not before, and the circuit closes.
func TestProberClosesAnIdleCircuit(t *testing.T) {
	var code atomic.Int32
	code.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(code.Load()))
	}))
	defer srv.Close()
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := NewBreaker(BreakerConfig{Threshold: 1, Cooldown: 30 * time.Second, Clock: clock, Gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_prober_state"})})
	cfg := &rest.Config{Host: srv.URL}
	b.Wrap(cfg)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	probe := func(ctx context.Context) error {
		probes++
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/version", nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	_ = probe(t.Context())
	if b.State() != CircuitOpen {
		t.Fatalf("state %d after a 503, want open", b.State())
	}
	probes = 0
	code.Store(http.StatusOK)

	clock.Step(29 * time.Second)
	if b.ProbeIfDue(t.Context(), probe) || probes != 0 {
		t.Errorf("probed %d times within the cooldown, want none", probes)
	}
	clock.Step(time.Second)
	if !b.ProbeIfDue(t.Context(), probe) || probes != 1 {
		t.Errorf("probed %d times after the cooldown, want one", probes)
	}
	if b.State() != CircuitClosed {
		t.Errorf("state %d after a successful probe, want closed", b.State())
	}
	if b.ProbeIfDue(t.Context(), probe) || probes != 1 {
		t.Errorf("probed a closed circuit: %d probes", probes)
	}
}

// TestProberStopsWithItsContext runs the prober loop and checks it ends when its context does.
func TestProberStopsWithItsContext(t *testing.T) {
	b := NewBreaker(BreakerConfig{Threshold: 1, Cooldown: time.Second, Gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_prober_loop_state"})})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Prober(time.Millisecond, func(context.Context) error { return nil })(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("prober returned %v", err)
	}
}

// TestBreakerGate checks the breaker as the engine's gate: closed while the circuit is not, and
// once it closes, each paused runtime is released at a fixed point of the window that starts then.
func TestBreakerGate(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := NewBreaker(BreakerConfig{Threshold: 1, Cooldown: 40 * time.Second, ReleaseWindow: time.Minute, Clock: clock,
		Gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_gate_state"})})
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("kcp-system/runtime-%d", i)
	}
	b.record(true)
	if b.Open() {
		t.Fatal("gate open while the circuit is open")
	}
	for _, k := range keys {
		if w := b.Wait(k); w < 40*time.Second+10*time.Second || w > 40*time.Second+11*time.Second {
			t.Fatalf("%s waits %s while the circuit is open for 40s, want the cooldown plus a poll of 10-11s", k, w)
		}
	}
	clock.Step(40 * time.Second)
	if err := b.allow(); err != nil {
		t.Fatal(err)
	}
	b.record(false)
	if !b.Open() {
		t.Fatal("gate closed after a successful probe")
	}
	var released [6]int // per ten seconds of the window
	for _, k := range keys {
		w := b.Wait(k)
		if w < 0 || w >= time.Minute {
			t.Fatalf("%s waits %s, want a point of the one-minute window", k, w)
		}
		released[int(w/(10*time.Second))]++
		if again := b.Wait(k); again != w {
			t.Fatalf("%s: place in the window moved from %s to %s", k, w, again)
		}
	}
	for i, n := range released {
		if n < 15 || n > 55 {
			t.Errorf("%d of %d runtimes released in second %d-%d of the window, want about a sixth: %v", n, len(keys), i*10, i*10+10, released)
		}
	}
	clock.Step(time.Minute)
	for _, k := range keys {
		if w := b.Wait(k); w != 0 {
			t.Fatalf("%s still waits %s after the window", k, w)
		}
	}
}
