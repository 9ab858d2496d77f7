package gardener

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Circuit states, as gardener_circuit_state reports them.
const (
	CircuitClosed   = 0
	CircuitHalfOpen = 1
	CircuitOpen     = 2
)

// ErrCircuitOpen is wrapped by the error of every call the breaker refuses.
var ErrCircuitOpen = errors.New("gardener circuit breaker is open")

var (
	circuitOnce  sync.Once
	circuitGauge prometheus.Gauge
)

func circuitState() prometheus.Gauge {
	circuitOnce.Do(func() {
		circuitGauge = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "infrastructure_manager_gardener_circuit_state",
			Help: "State of the Gardener circuit breaker: 0 closed, 1 half-open, 2 open.",
		})
		ctrlmetrics.Registry.MustRegister(circuitGauge)
	})
	return circuitGauge
}

// Breaker stops calling Gardener while it is down: after Threshold consecutive failures
// (connection errors and 500, 502, 503, 504 replies; a 429 is an answer, not a failure) it opens
// and refuses every call for Cooldown, then lets one probe through (half-open); a probe that
// succeeds closes it, one that fails opens it again. Refused calls fail at once with a Throttled
// error that asks to wait out the cooldown, so the engine does not hammer a dead Gardener.
type Breaker struct {
	threshold int
	cooldown  time.Duration
	clock     clock.PassiveClock
	gauge     prometheus.Gauge

	mu       sync.Mutex
	state    int
	failures int
	openedAt time.Time
	probing  bool
}

// NewBreaker returns a closed breaker; gauge may be nil to use gardener_circuit_state.
func NewBreaker(threshold int, cooldown time.Duration, c clock.PassiveClock, gauge prometheus.Gauge) *Breaker {
	if c == nil {
		c = clock.RealClock{}
	}
	if gauge == nil {
		gauge = circuitState()
	}
	gauge.Set(CircuitClosed)
	return &Breaker{threshold: threshold, cooldown: cooldown, clock: c, gauge: gauge}
}

// Wrap puts the breaker in front of every call through cfg.
func (b *Breaker) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if err := b.allow(); err != nil {
				return nil, err
			}
			resp, err := next.RoundTrip(req)
			b.record(err != nil || isOutage(resp.StatusCode))
			return resp, err //nolint:wrapcheck // a RoundTripper passes its transport's error through unchanged.
		})
	})
}

// State returns the breaker's state.
func (b *Breaker) State() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

func (b *Breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case CircuitOpen:
		wait := b.cooldown - b.clock.Since(b.openedAt)
		if wait > 0 {
			return retry.Throttled("GardenerCircuitOpen", wait, fmt.Errorf("%w for another %s", ErrCircuitOpen, wait.Round(time.Second)))
		}
		b.set(CircuitHalfOpen)
		b.probing = true
		return nil
	case CircuitHalfOpen:
		if b.probing {
			return retry.Throttled("GardenerCircuitOpen", time.Second, fmt.Errorf("%w: a probe is under way", ErrCircuitOpen))
		}
		b.probing = true
	}
	return nil
}

func (b *Breaker) record(failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == CircuitHalfOpen {
		b.probing = false
		if failed {
			b.open()
		} else {
			b.failures = 0
			b.set(CircuitClosed)
		}
		return
	}
	if !failed {
		b.failures = 0
		return
	}
	b.failures++
	if b.state == CircuitClosed && b.failures >= b.threshold {
		b.open()
	}
}

// ProbeDue reports whether the circuit is open and its cooldown has passed, so the next call
// would be the half-open probe.
func (b *Breaker) ProbeDue() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == CircuitOpen && b.clock.Since(b.openedAt) >= b.cooldown
}

// Prober makes sure an open circuit is probed once its cooldown has passed, even when no caller
// would call Gardener then: the runtimes that were failing may all be waiting out a backoff, or
// Failed, and the shoot watch may still hold its old connection, so without a probe the circuit
// could stay open long after Gardener is back. Every interval it runs ProbeIfDue. It runs until
// ctx ends.
func (b *Breaker) Prober(interval time.Duration, probe func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				b.ProbeIfDue(ctx, probe)
			}
		}
	}
}

// ProbeIfDue runs probe, a cheap call through the breaker's own transport, when the circuit is
// open and its cooldown has passed; its reply closes the circuit or opens it for another
// cooldown. It reports whether it probed.
func (b *Breaker) ProbeIfDue(ctx context.Context, probe func(context.Context) error) bool {
	if !b.ProbeDue() {
		return false
	}
	// The breaker records the outcome itself; the error is Gardener's and nobody else's business.
	_ = probe(ctx)
	return true
}

func (b *Breaker) open() {
	b.openedAt = b.clock.Now()
	b.set(CircuitOpen)
}

func (b *Breaker) set(state int) {
	b.state = state
	b.gauge.Set(float64(state))
}

// isOutage tells the replies that mean Gardener is not serving.
func isOutage(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
