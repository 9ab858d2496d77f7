package fsm

import (
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Recorder records Kubernetes events; client-go's record.EventRecorder satisfies it.
type Recorder interface {
	Event(object runtime.Object, eventtype, reason, message string)
}

// RecorderFunc adapts a function to a Recorder.
type RecorderFunc func(object runtime.Object, eventtype, reason, message string)

// Event calls f.
func (f RecorderFunc) Event(object runtime.Object, eventtype, reason, message string) {
	f(object, eventtype, reason, message)
}

type nopRecorder struct{}

func (nopRecorder) Event(runtime.Object, string, string, string) {}

type config struct {
	clock           clock.PassiveClock
	rand            func() float64
	recorder        Recorder
	metrics         *Metrics
	objects         *ObjectMetrics
	objectLabels    func(client.Object) prometheus.Labels
	logValues       func(client.Object) []any
	retryAnnotation string
	probeInterval   time.Duration
	resync          time.Duration
	conflictLimit   int32
	conflictDelay   time.Duration
	maxMessage      int
	onForget        func(types.NamespacedName)
	inputs          func(client.Object) string
	advance         time.Duration
	chainSteps      int
	chainFor        time.Duration
	gate            Gate
	stepTimeout     time.Duration
	pollSpread      float64
}

func defaultConfig() config {
	return config{
		clock:         clock.RealClock{},
		rand:          rand.Float64,
		recorder:      nopRecorder{},
		probeInterval: time.Hour,
		resync:        30 * time.Minute,
		conflictLimit: 5,
		conflictDelay: time.Second,
		maxMessage:    512,
		advance:       defaultAdvance,
		chainSteps:    1,
		stepTimeout:   2 * time.Minute,
		pollSpread:    DefaultPollSpread,
	}
}

// Option configures an Engine.
type Option func(*config)

// WithClock sets the clock; tests pass a fake one so nothing sleeps for a backoff.
func WithClock(c clock.PassiveClock) Option { return func(o *config) { o.clock = c } }

// WithRand sets the source of jitter, a function returning values in [0,1).
func WithRand(f func() float64) Option { return func(o *config) { o.rand = f } }

// WithRecorder sets where events go.
func WithRecorder(r Recorder) Option { return func(o *config) { o.recorder = r } }

// WithMetrics sets the metrics the engine updates; without it the engine records none.
func WithMetrics(m *Metrics) Option { return func(o *config) { o.metrics = m } }

// WithObjectMetrics turns on the series about each object (failed, retrying, step entered, step
// deadline) that m names. labels returns the values of the labels that identify an object, those
// of ObjectSeries.Labels; a label it leaves out is empty.
func WithObjectMetrics(m *ObjectMetrics, labels func(client.Object) prometheus.Labels) Option {
	return func(o *config) { o.objects, o.objectLabels = m, labels }
}

// WithLogValues adds the key and value pairs that f returns for an object (its id in the
// caller's terms, say) to every line the engine and the object's steps log.
func WithLogValues(f func(client.Object) []any) Option { return func(o *config) { o.logValues = f } }

// WithRetryAnnotation names the annotation by which a user asks for a manual retry; the object's
// API owns the name. Any new RFC 3339 time in it resets the retry budget of the current step and
// runs the step at once, or runs a Ready object's machine again; the engine echoes the handled
// value in status.retryRequestedAt and ignores any other value (see
// fsmv1.EngineStatus.PendingRetryRequest). Without it, the engine takes no manual retries.
func WithRetryAnnotation(name string) Option { return func(o *config) { o.retryAnnotation = name } }

// WithInputs sets how to fingerprint the inputs an object's steps read from outside the object,
// such as a landscape ConfigMap. The engine records the fingerprint when the machine starts;
// when it changes, a Ready object runs its machine again, as for a new generation, and an object
// in the middle of its machine runs again once it is Ready. Pair it with a watch that enqueues
// the affected objects when the inputs change.
func WithInputs(f func(client.Object) string) Option { return func(o *config) { o.inputs = f } }

// WithAdvanceDelay sets how soon the next step runs after a step moved on (default 1ms); a
// longer delay gives the informer cache time to see the status just written.
func WithAdvanceDelay(d time.Duration) Option {
	return func(o *config) {
		if d > 0 {
			o.advance = d
		}
	}
}

// WithChain lets one call run up to steps steps while each moves on to the next, for at most
// within (a step that starts later waits for the next call). The object's status is then
// written once for the whole chain: a step change costs no status write of its own, and the
// next step never runs from a copy that lacks the step before it. Steps must not depend on
// seeing their predecessor's status persisted; the engine's own guarantees (retry records,
// deadlines) hold either way, because every failure and every wait ends the chain.
func WithChain(steps int, within time.Duration) Option {
	return func(o *config) {
		if steps > 0 {
			o.chainSteps, o.chainFor = steps, within
		}
	}
}

// Gate holds back the objects whose step was paused (retry.ClassPaused) because a dependency every
// object shares is down, and releases them when it is back. A Gate spreads the release over a
// window, so the objects do not all call the dependency in the same second.
type Gate interface {
	// Open reports whether the dependency is available now.
	Open() bool
	// Wait returns how long the paused object with this key must still wait before its step runs
	// again; zero means now.
	Wait(key string) time.Duration
}

// WithGate sets the gate of paused steps. Without one, a paused step runs again after the delay
// its error suggested (at least a second), still without spending an attempt.
func WithGate(g Gate) Option { return func(o *config) { o.gate = g } }

// WithStepTimeout bounds one run of a step (default 2m): its context ends then, so a call that
// hangs fails the step (as a Timeout reason, retried) instead of holding a worker.
func WithStepTimeout(d time.Duration) Option {
	return func(o *config) {
		if d > 0 {
			o.stepTimeout = d
		}
	}
}

// WithProbeInterval sets how often a Failed object's step is tried once more (default 1h). A
// probe does not reset the budget; one that succeeds ends the failure. A d that is not positive
// keeps the default.
func WithProbeInterval(d time.Duration) Option {
	return func(o *config) {
		if d > 0 {
			o.probeInterval = d
		}
	}
}

// WithResync sets how often a Ready object is checked again from the start step (default 30m,
// spread by ±10% per object). A d that is not positive keeps the default.
func WithResync(d time.Duration) Option {
	return func(o *config) {
		if d > 0 {
			o.resync = d
		}
	}
}

// DefaultPollSpread is the poll spread of an engine without WithPollSpread.
const DefaultPollSpread = 0.1

// WithPollSpread spreads each poll of a waiting step by up to ±fraction of the interval its
// Wait asks for (default DefaultPollSpread). The spread keeps waiting objects from polling in
// lockstep. Zero polls at exactly the interval asked for. A fraction outside [0, 1] is ignored.
func WithPollSpread(fraction float64) Option {
	return func(o *config) {
		if fraction >= 0 && fraction <= 1 {
			o.pollSpread = fraction
		}
	}
}

// WithOnForget is called when an object is gone, so a controller can drop what it keeps about
// it, such as metric series of its own.
func WithOnForget(f func(types.NamespacedName)) Option { return func(o *config) { o.onForget = f } }

// WithConflictLimit sets how many consecutive write conflicts are retried without spending the
// budget (default 5) and the ceiling of the short delay before each (default 1s).
func WithConflictLimit(n int32, delay time.Duration) Option {
	return func(o *config) { o.conflictLimit, o.conflictDelay = n, delay }
}

// eventsRecorder adapts client-go's events.k8s.io recorder, which controller-runtime's manager
// hands out, to a Recorder.
type eventsRecorder struct{ r events.EventRecorder }

// EventsRecorder returns a Recorder that writes events.k8s.io/v1 Events through r.
func EventsRecorder(r events.EventRecorder) Recorder { return eventsRecorder{r: r} }

func (e eventsRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	e.r.Eventf(object, nil, eventtype, reason, reason, "%s", message)
}
