package gardenclient

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Circuit states, as the breaker's gauge reports them.
const (
	CircuitClosed   = 0
	CircuitHalfOpen = 1
	CircuitOpen     = 2
)

// ErrCircuitOpen is wrapped by the error of every call the breaker refuses.
var ErrCircuitOpen = errors.New("gardener circuit breaker is open")

// Breaker stops calling Gardener while it is down: after Threshold consecutive failures
// (connection errors and 500, 502, 503, 504 replies; a 429 is an answer, not a failure) it opens
// and refuses every call for Cooldown, then lets one probe through (half-open); a probe that
// succeeds closes it, one that fails opens it again. Refused calls, and the failed call that
// opens the circuit, fail at once with a Paused error: the step that made them waits for the
// circuit to close and spends no attempt. As the engine's fsm.Gate, the breaker then releases
// the paused runtimes spread over ReleaseWindow, so they neither hammer a recovering Gardener
// nor wait out backoffs they grew during the outage. A breaker whose Threshold is zero (or
// negative) is disabled: it never opens, so every call reaches Gardener and the gate is always
// open.
type Breaker struct {
	threshold int
	cooldown  time.Duration
	window    time.Duration
	clock     clock.PassiveClock
	gauge     prometheus.Gauge

	mu       sync.Mutex
	state    int
	failures int
	openedAt time.Time
	closedAt time.Time
	probing  bool
}

// BreakerConfig configures a Breaker.
type BreakerConfig struct {
	// Threshold is the number of consecutive failures that opens the circuit; zero or less means
	// it never opens.
	Threshold int
	// Cooldown is how long an open circuit refuses calls before one probe.
	Cooldown time.Duration
	// ReleaseWindow spreads the release of paused runtimes after the circuit closes, and after
	// the manager starts.
	ReleaseWindow time.Duration
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	// Gauge reports the circuit's state (the metrics package's GardenerCircuit). Nil reports
	// it nowhere.
	Gauge prometheus.Gauge
}

// NewBreaker returns a closed breaker.
func NewBreaker(c BreakerConfig) *Breaker {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	b := &Breaker{threshold: c.Threshold, cooldown: c.Cooldown, window: c.ReleaseWindow,
		clock: c.Clock, gauge: c.Gauge, closedAt: c.Clock.Now()}
	b.report(CircuitClosed)
	return b
}

// report sets the gauge, if there is one, to state.
func (b *Breaker) report(state int) {
	if b.gauge != nil {
		b.gauge.Set(float64(state))
	}
}

// Wrap puts the breaker in front of every call through cfg.
func (b *Breaker) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if err := b.allow(); err != nil {
				return nil, err
			}
			resp, err := next.RoundTrip(req)
			failed := err != nil || isOutage(resp.StatusCode)
			if opened := b.record(failed); opened {
				// The call that opened the circuit is part of the outage, like the ones it
				// refuses next: it pauses its step instead of spending an attempt.
				if resp != nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
				return nil, b.refusal(b.cooldown)
			}
			return resp, err //nolint:wrapcheck // a RoundTripper passes its transport's error through unchanged.
		})
	})
}

// refusal is the error of a call the open circuit refused. Its message is the same for every
// call, so the status of a paused runtime does not change while the outage lasts.
func (b *Breaker) refusal(after time.Duration) error {
	return retry.Paused("GardenerCircuitOpen", after,
		fmt.Errorf("%w: Gardener failed %d calls in a row; calls resume when a probe succeeds", ErrCircuitOpen, b.threshold))
}

// Open reports whether the circuit is closed, that is, whether Gardener is available: the
// fsm.Gate side of the breaker.
func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == CircuitClosed
}

// Wait returns how long the paused runtime with this key must still wait. While the circuit is
// not closed, until the next moment it might be (at least a second); once it is closed, until
// the runtime's place in the release window, which is fixed per key and starts when the circuit
// closed.
func (b *Breaker) Wait(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	poll := max(b.cooldown/4, time.Second) + spread(key, time.Second)
	switch b.state {
	case CircuitOpen:
		return max(b.cooldown-now.Sub(b.openedAt), 0) + poll
	case CircuitHalfOpen:
		return poll
	}
	release := b.closedAt.Add(spread(key, b.window))
	if now.Before(release) {
		return release.Sub(now)
	}
	return 0
}

// spread maps key to a fixed point of [0, d), evenly for keys that differ only in a suffix:
// FNV alone leaves its high bits alike for those, so its sum is mixed (splitmix64's finalizer).
func spread(key string, d time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	x := h.Sum64()
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return time.Duration(float64(d) * float64(x>>11) / float64(1<<53))
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
			return b.refusal(wait)
		}
		b.set(CircuitHalfOpen)
		b.probing = true
		return nil
	case CircuitHalfOpen:
		if b.probing {
			return b.refusal(time.Second)
		}
		b.probing = true
	}
	return nil
}

// record counts a call's outcome and reports whether it was a failure that found or left the
// circuit open.
func (b *Breaker) record(failed bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == CircuitHalfOpen {
		b.probing = false
		if failed {
			b.open()
		} else {
			b.failures = 0
			b.closedAt = b.clock.Now()
			b.set(CircuitClosed)
		}
		return failed
	}
	if !failed {
		b.failures = 0
		return false
	}
	b.failures++
	if b.state == CircuitClosed && b.threshold > 0 && b.failures >= b.threshold {
		b.open()
	}
	return b.state == CircuitOpen
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
	b.report(state)
}

// isOutage tells the replies that mean Gardener is not serving.
func isOutage(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
