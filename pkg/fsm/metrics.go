package fsm

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

const namespace = "infrastructure_manager"

// Metrics are the engine's Prometheus metrics. One set serves every engine of a process; the
// controller label tells them apart.
type Metrics struct {
	stepDuration *prometheus.HistogramVec
	failures     *prometheus.CounterVec
	retries      *prometheus.CounterVec
	exhausted    *prometheus.CounterVec

	failed       *prometheus.GaugeVec
	retrying     *prometheus.GaugeVec
	stepEntered  *prometheus.GaugeVec
	stepDeadline *prometheus.GaugeVec

	mu     sync.Mutex
	series map[string]objectSeries // by object key: the per-object series currently set
}

// objectSeries remembers the label sets of one object's series so they can be deleted exactly.
type objectSeries struct {
	failed, retrying, entered prometheus.Labels
}

// NewMetrics creates the engine's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "fsm_step_duration_seconds",
			Help:    "Time a step's Run took, by controller and step.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"controller", "step"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "fsm_step_failures_total",
			Help: "Failed step runs, by controller, step and error class.",
		}, []string{"controller", "step", "class"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "fsm_retries_total",
			Help: "Step runs that retried a failure (never polls of a waiting step).",
		}, []string{"controller", "step"}),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "fsm_retries_exhausted_total",
			Help: "Steps that ended Failed: budget exhausted, terminal error or timeout, by class.",
		}, []string{"controller", "step", "class"}),
		failed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "runtime_failed",
			Help: "1 while a runtime is Failed; the series exists only then.",
		}, []string{"runtime_id", "runtime_name", "shoot", "step", "reason", "class"}),
		retrying: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "runtime_retrying",
			Help: "The attempt number while a runtime's step is being retried; the series exists only then.",
		}, []string{"runtime_id", "runtime_name", "shoot", "step", "reason"}),
		stepEntered: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "runtime_step_entered_timestamp_seconds",
			Help: "When a runtime that is not Ready entered its current step (unix seconds).",
		}, []string{"runtime_id", "step"}),
		stepDeadline: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "runtime_step_deadline_seconds",
			Help: "How long the current step of a runtime that is not Ready may wait, in seconds; absent for steps without a deadline.",
		}, []string{"runtime_id", "step"}),
		series: map[string]objectSeries{},
	}
	reg.MustRegister(m.stepDuration, m.failures, m.retries, m.exhausted,
		m.failed, m.retrying, m.stepEntered, m.stepDeadline)
	return m
}

var (
	defaultMetricsOnce sync.Once
	defaultMetrics     *Metrics
)

// DefaultMetrics returns the metrics registered with controller-runtime's registry, which the
// manager serves on its metrics endpoint.
func DefaultMetrics() *Metrics {
	defaultMetricsOnce.Do(func() { defaultMetrics = NewMetrics(ctrlmetrics.Registry) })
	return defaultMetrics
}

// precreate sets every counter of a machine to 0, so rate() and increase() see the first failure.
func (m *Metrics) precreate(controller string, steps []string) {
	classes := []retry.Class{retry.ClassTransient, retry.ClassThrottled, retry.ClassConflict, retry.ClassTerminal, retry.ClassTimeout}
	for _, s := range steps {
		m.retries.WithLabelValues(controller, s)
		for _, c := range classes {
			m.failures.WithLabelValues(controller, s, string(c))
			if c != retry.ClassConflict {
				m.exhausted.WithLabelValues(controller, s, string(c))
			}
		}
	}
}

// ObjectLabels identify an object in the per-runtime series.
type ObjectLabels struct {
	// ID is the runtime id.
	ID string
	// Name is the object's name.
	Name string
	// Shoot is the name of the Gardener shoot.
	Shoot string
}

// syncObject makes the object's per-runtime series match its status: failed while Failed,
// retrying while a retry is pending, step-entered while not Ready. Other series of the object
// are deleted.
func (m *Metrics) syncObject(key string, id ObjectLabels, st *infrav1.EngineStatus, deadline float64) {
	want := objectSeries{}
	r := st.Retry
	if st.State == infrav1.StateFailed && r != nil {
		want.failed = prometheus.Labels{"runtime_id": id.ID, "runtime_name": id.Name, "shoot": id.Shoot,
			"step": r.Step, "reason": r.Reason, "class": r.Class}
	}
	if st.State != infrav1.StateFailed && r != nil && r.Attempt > 0 {
		want.retrying = prometheus.Labels{"runtime_id": id.ID, "runtime_name": id.Name, "shoot": id.Shoot,
			"step": r.Step, "reason": r.Reason}
	}
	if st.State != infrav1.StateReady && st.Step != nil {
		want.entered = prometheus.Labels{"runtime_id": id.ID, "step": st.Step.Name}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(key, want)
	if want.failed != nil {
		m.failed.With(want.failed).Set(1)
	}
	if want.retrying != nil {
		m.retrying.With(want.retrying).Set(float64(r.Attempt))
	}
	if want.entered != nil {
		m.stepEntered.With(want.entered).Set(float64(st.Step.EnteredAt.Unix()))
		if deadline > 0 {
			m.stepDeadline.With(want.entered).Set(deadline)
		} else {
			// A step without a deadline publishes none; the alert rule applies its default.
			m.stepDeadline.Delete(want.entered)
		}
	}
	if want.failed == nil && want.retrying == nil && want.entered == nil {
		delete(m.series, key)
	} else {
		m.series[key] = want
	}
}

// forget deletes every per-runtime series of an object that is gone.
func (m *Metrics) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(key, objectSeries{})
	delete(m.series, key)
}

// deleteLocked deletes the object's series that differ from want.
func (m *Metrics) deleteLocked(key string, want objectSeries) {
	have, ok := m.series[key]
	if !ok {
		return
	}
	if have.failed != nil && !equalLabels(have.failed, want.failed) {
		m.failed.Delete(have.failed)
	}
	if have.retrying != nil && !equalLabels(have.retrying, want.retrying) {
		m.retrying.Delete(have.retrying)
	}
	if have.entered != nil && !equalLabels(have.entered, want.entered) {
		m.stepEntered.Delete(have.entered)
		m.stepDeadline.Delete(have.entered)
	}
}

func equalLabels(a, b prometheus.Labels) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
