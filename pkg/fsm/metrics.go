package fsm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// The labels the engine sets on its series.
const (
	// LabelController is the machine's name, on the step metrics.
	LabelController = "controller"
	// LabelStep is the step's name.
	LabelStep = "step"
	// LabelReason is the reason of the last error.
	LabelReason = "reason"
	// LabelClass is the class of the last error (package retry).
	LabelClass = "class"
)

// Metrics are the engine's Prometheus metrics about steps: durations, failures, retries and
// exhaustions by controller, step and class. One set serves every engine of a process; the
// controller label tells them apart. The series about single objects are ObjectMetrics.
type Metrics struct {
	stepDuration *prometheus.HistogramVec
	failures     *prometheus.CounterVec
	retries      *prometheus.CounterVec
	exhausted    *prometheus.CounterVec
}

// StepSeries names the engine's step metrics. The caller names them, as it names ObjectSeries:
// they are its contract with its alerts and dashboards. The engine sets their labels.
type StepSeries struct {
	// Namespace prefixes every name, as prometheus.Opts.Namespace does. It may be empty.
	Namespace string
	// Duration is a histogram of how long a step's Run took, labelled controller and step.
	Duration Series
	// Failures counts failed step runs, labelled controller, step and class.
	Failures Series
	// Retries counts step runs that retried a failure, labelled controller and step. Polls of
	// a waiting step are no retries.
	Retries Series
	// Exhausted counts steps that ended Failed, labelled controller, step and class.
	Exhausted Series
}

// stepBuckets are the bounds of the Duration histogram, in seconds.
var stepBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// NewMetrics creates the step metrics that s names and registers them with reg. It fails when a
// series has no name or help text, or when reg refuses one; then nothing stays registered.
func NewMetrics(reg prometheus.Registerer, s StepSeries) (*Metrics, error) {
	if err := errors.Join(unnamed(map[string]Series{"Duration": s.Duration, "Failures": s.Failures,
		"Retries": s.Retries, "Exhausted": s.Exhausted})...); err != nil {
		return nil, fmt.Errorf("step series: %w", err)
	}
	counter := func(series Series, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: s.Namespace, Name: series.Name, Help: series.Help}, labels)
	}
	m := &Metrics{
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: s.Namespace, Name: s.Duration.Name, Help: s.Duration.Help, Buckets: stepBuckets,
		}, []string{LabelController, LabelStep}),
		failures:  counter(s.Failures, LabelController, LabelStep, LabelClass),
		retries:   counter(s.Retries, LabelController, LabelStep),
		exhausted: counter(s.Exhausted, LabelController, LabelStep, LabelClass),
	}
	if err := register(reg, m.stepDuration, m.failures, m.retries, m.exhausted); err != nil {
		return nil, fmt.Errorf("register step series: %w", err)
	}
	return m, nil
}

// unnamed returns an error for each series without a name or a help text, in the order of
// their keys.
func unnamed(series map[string]Series) []error {
	var errs []error
	for _, what := range slices.Sorted(maps.Keys(series)) {
		if series[what].Name == "" || series[what].Help == "" {
			errs = append(errs, fmt.Errorf("series %s needs a name and a help text", what))
		}
	}
	return errs
}

// register registers every collector with reg, or none: it undoes what it did when reg refuses
// one.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, r := range cs[:i] {
				reg.Unregister(r)
			}
			return err //nolint:wrapcheck // the callers wrap it.
		}
	}
	return nil
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

// Series names one metric of StepSeries or ObjectSeries.
type Series struct {
	// Name of the metric, after the namespace.
	Name string
	// Help text of the metric.
	Help string
}

// ObjectSeries describes the gauges an engine keeps about each object it drives, which alerts
// and dashboards read: their names, and the labels that identify an object in them. The caller
// names them all, for they are the caller's contract with its alerts; the engine adds the labels
// that describe the object's state: step, reason and class.
type ObjectSeries struct {
	// Namespace prefixes every name, as prometheus.Opts.Namespace does.
	Namespace string
	// Failed is 1 while an object is Failed, labelled by Labels, step, reason and class; the
	// series exists only then.
	Failed Series
	// Retrying is the attempt number while an object's step is being retried, labelled by
	// Labels, step and reason; the series exists only then.
	Retrying Series
	// StepEntered is when an object that is not Ready entered its current step (unix seconds),
	// labelled by StepLabels and step.
	StepEntered Series
	// StepDeadline is how long the current step of an object that is not Ready may wait, in
	// seconds, labelled like StepEntered; absent for steps without a deadline.
	StepDeadline Series
	// Labels identify an object in Failed and Retrying, in this order.
	Labels []string
	// StepLabels identify an object in StepEntered and StepDeadline; each is one of Labels.
	StepLabels []string
}

// validate checks that every series has a name and that the labels are distinct and not the
// engine's own; the registry checks that they are valid label names.
func (s ObjectSeries) validate() error {
	errs := unnamed(map[string]Series{"Failed": s.Failed, "Retrying": s.Retrying,
		"StepEntered": s.StepEntered, "StepDeadline": s.StepDeadline})
	seen := map[string]bool{}
	for _, l := range s.Labels {
		if l == "" || seen[l] || l == LabelStep || l == LabelReason || l == LabelClass {
			errs = append(errs, fmt.Errorf("label %q is empty, repeated or one the engine sets", l))
		}
		seen[l] = true
	}
	for _, l := range s.StepLabels {
		if !seen[l] {
			errs = append(errs, fmt.Errorf("step label %q is not one of the labels %v", l, s.Labels))
		}
	}
	return errors.Join(errs...)
}

// ObjectMetrics are the gauges of an ObjectSeries. They follow the status of each object the
// engine drives, and an object's series go when its state no longer calls for them or when the
// object is gone. One set may serve several engines: each keeps the series of its own objects.
type ObjectMetrics struct {
	failed       *prometheus.GaugeVec
	retrying     *prometheus.GaugeVec
	stepEntered  *prometheus.GaugeVec
	stepDeadline *prometheus.GaugeVec
	labels       []string
	stepLabels   []string

	mu     sync.Mutex
	series map[string]objectSeries // by object key: the per-object series currently set
}

// objectSeries remembers the label sets of one object's series so they can be deleted exactly.
type objectSeries struct {
	failed, retrying, entered prometheus.Labels
}

// NewObjectMetrics creates the gauges that s describes and registers them with reg. It fails
// when s is incomplete or reg refuses a gauge.
func NewObjectMetrics(reg prometheus.Registerer, s ObjectSeries) (*ObjectMetrics, error) {
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("object series: %w", err)
	}
	gauge := func(series Series, labels ...[]string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: s.Namespace, Name: series.Name, Help: series.Help},
			slices.Concat(labels...))
	}
	m := &ObjectMetrics{
		failed:       gauge(s.Failed, s.Labels, []string{LabelStep, LabelReason, LabelClass}),
		retrying:     gauge(s.Retrying, s.Labels, []string{LabelStep, LabelReason}),
		stepEntered:  gauge(s.StepEntered, s.StepLabels, []string{LabelStep}),
		stepDeadline: gauge(s.StepDeadline, s.StepLabels, []string{LabelStep}),
		labels:       slices.Clone(s.Labels),
		stepLabels:   slices.Clone(s.StepLabels),
		series:       map[string]objectSeries{},
	}
	if err := register(reg, m.failed, m.retrying, m.stepEntered, m.stepDeadline); err != nil {
		return nil, fmt.Errorf("register object series: %w", err)
	}
	return m, nil
}

// pick returns the values of names in id, with the engine's labels added.
func pick(id prometheus.Labels, names []string, extra ...string) prometheus.Labels {
	out := make(prometheus.Labels, len(names)+len(extra)/2)
	for _, n := range names {
		out[n] = id[n]
	}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i]] = extra[i+1]
	}
	return out
}

// sync makes the object's series match its status: failed while Failed, retrying while a retry
// is pending, step-entered while not Ready. Other series of the object are deleted.
func (m *ObjectMetrics) sync(key string, id prometheus.Labels, st *fsmv1.EngineStatus, deadline float64) {
	want := objectSeries{}
	r := st.Retry
	if st.State == fsmv1.StateFailed && r != nil {
		want.failed = pick(id, m.labels, LabelStep, r.Step, LabelReason, r.Reason, LabelClass, r.Class)
	}
	if st.State != fsmv1.StateFailed && r != nil && r.Attempt > 0 {
		want.retrying = pick(id, m.labels, LabelStep, r.Step, LabelReason, r.Reason)
	}
	if st.State != fsmv1.StateReady && st.Step != nil {
		want.entered = pick(id, m.stepLabels, LabelStep, st.Step.Name)
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

// forget deletes every series of an object that is gone.
func (m *ObjectMetrics) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(key, objectSeries{})
	delete(m.series, key)
}

// deleteLocked deletes the object's series that differ from want.
func (m *ObjectMetrics) deleteLocked(key string, want objectSeries) {
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
