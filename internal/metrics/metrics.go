// Package metrics declares every metric the manager serves: its name, help text and labels, and
// the prefix they share. This is the contract that the alert rules, the dashboard and the
// runbooks read.
//
// New builds all of them once and registers them with one registerer. The manager passes
// controller-runtime's registry, which its metrics endpoint serves. A test passes a fresh
// prometheus.NewRegistry(). The manager then hands each part to the code that updates it. No
// other package names a metric, and none keeps one in a package variable.
//
// The engine's metrics live in pkg/fsm, which must not import this package. So fsm takes their
// names and help texts as an fsm.StepSeries and an fsm.ObjectSeries, and New fills them in from
// the declarations here. The engine sets some labels itself (controller, step, reason, class).
// Their names are fsm's constants, and the declarations here list them too.
//
// Upstream's metrics keep upstream's names and label names. New builds their descriptors. A
// collector in internal/manager reads the objects at each scrape and fills them in.
package metrics

import (
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// Prefix starts the name of every metric of the manager.
const Prefix = "infrastructure_manager"

// Labels that identify a runtime in the manager's own metrics.
const (
	// LabelRuntimeID is the runtime id (label kyma-project.io/runtime-id).
	LabelRuntimeID = "runtime_id"
	// LabelRuntimeName is the name of the Runtime object.
	LabelRuntimeName = "runtime_name"
	// LabelShoot is the name of the runtime's shoot.
	LabelShoot = "shoot"
)

// Metric declares one metric of the contract.
type Metric struct {
	// Name is the full name, Prefix included.
	Name string
	// Help is the help text.
	Help string
	// Labels are the label names, in the order of the label values.
	Labels []string
}

// The declarations. Each metric is named here and nowhere else.
var (
	stepDuration = Metric{Name: Prefix + "_fsm_step_duration_seconds",
		Help:   "Time a step's Run took, by controller and step.",
		Labels: []string{fsm.LabelController, fsm.LabelStep}}
	stepFailures = Metric{Name: Prefix + "_fsm_step_failures_total",
		Help:   "Failed step runs, by controller, step and error class.",
		Labels: []string{fsm.LabelController, fsm.LabelStep, fsm.LabelClass}}
	stepRetries = Metric{Name: Prefix + "_fsm_retries_total",
		Help:   "Step runs that retried a failure (never polls of a waiting step).",
		Labels: []string{fsm.LabelController, fsm.LabelStep}}
	stepExhausted = Metric{Name: Prefix + "_fsm_retries_exhausted_total",
		Help:   "Steps that ended Failed: budget exhausted, terminal error or timeout, by class.",
		Labels: []string{fsm.LabelController, fsm.LabelStep, fsm.LabelClass}}

	runtimeFailed = Metric{Name: Prefix + "_runtime_failed",
		Help: "1 while a runtime is Failed; the series exists only then.",
		Labels: []string{LabelRuntimeID, LabelRuntimeName, LabelShoot,
			fsm.LabelStep, fsm.LabelReason, fsm.LabelClass}}
	runtimeRetrying = Metric{Name: Prefix + "_runtime_retrying",
		Help: "The attempt number while a runtime's step is being retried; the series exists only then.",
		Labels: []string{LabelRuntimeID, LabelRuntimeName, LabelShoot,
			fsm.LabelStep, fsm.LabelReason}}
	runtimeStepEntered = Metric{Name: Prefix + "_runtime_step_entered_timestamp_seconds",
		Help:   "When a runtime that is not Ready entered its current step (unix seconds).",
		Labels: []string{LabelRuntimeID, fsm.LabelStep}}
	runtimeStepDeadline = Metric{Name: Prefix + "_runtime_step_deadline_seconds",
		Help:   "How long the current step of a runtime that is not Ready may wait, in seconds; absent for steps without a deadline.",
		Labels: []string{LabelRuntimeID, fsm.LabelStep}}

	gardenerRequests = Metric{Name: Prefix + "_gardener_requests_total",
		Help:   "Requests to the Gardener API by verb and HTTP status code (\"error\" when no reply arrived).",
		Labels: []string{"verb", "code"}}
	gardenerCircuit = Metric{Name: Prefix + "_gardener_circuit_state",
		Help: "State of the Gardener circuit breaker: 0 closed, 1 half-open, 2 open."}
	kubeconfigExpiration = Metric{Name: Prefix + "_kubeconfig_expiration_timestamp_seconds",
		Help:   "When the stored admin kubeconfig of a runtime expires (unix seconds).",
		Labels: []string{LabelRuntimeID, LabelShoot}}

	shadowPlannedWrites = Metric{Name: Prefix + "_shadow_planned_writes",
		Help:   "Writes the latest pass over an object would make (shadow mode) or made (recorded writes), by target and kind of the object written.",
		Labels: []string{"controller", "namespace", "name", "target", "kind"}}
	shadowRefusedRequests = Metric{Name: Prefix + "_shadow_refused_requests_total",
		Help:   "Requests that could change state which a shadow manager refused to send, by target; any is a code path that writes without its dry run.",
		Labels: []string{"target"}}

	// Upstream's metrics, under upstream's names and label names (its internal/controller/metrics).
	upstreamRuntimeState = Metric{Name: Prefix + "_im_runtime_state",
		Help:   "Exposes current Status.state for Runtime CRs (upstream's metric)",
		Labels: []string{"runtimeId", "runtimeName", "shoot", "provider", "state", "message"}}
	upstreamClusterState = Metric{Name: Prefix + "_im_gardener_clusters_state",
		Help:   "Indicates the Status.state for GardenerCluster CRs (upstream's metric)",
		Labels: []string{"runtimeId", "shoot", "state", "reason"}}
	upstreamKubeconfigExpiration = Metric{Name: Prefix + "_im_kubeconfig_expiration",
		Help:   "Exposes current kubeconfig expiration value in epoch timestamp value format (upstream's metric)",
		Labels: []string{"runtimeId", "shoot", "expires", "rotationDuration", "expirationDuration"}}
)

// Declared returns every metric of the contract.
func Declared() []Metric {
	all := []Metric{stepDuration, stepFailures, stepRetries, stepExhausted,
		runtimeFailed, runtimeRetrying, runtimeStepEntered, runtimeStepDeadline,
		gardenerRequests, gardenerCircuit, kubeconfigExpiration,
		shadowPlannedWrites, shadowRefusedRequests,
		upstreamRuntimeState, upstreamClusterState, upstreamKubeconfigExpiration}
	for i := range all {
		all[i].Labels = slices.Clone(all[i].Labels)
	}
	return all
}

// Metrics are every metric of the manager, registered with one registerer.
type Metrics struct {
	// Steps are the engines' step metrics. Both controllers share them; the controller label
	// tells them apart.
	Steps *fsm.Metrics
	// Runtimes are the series the Runtime engine keeps about each Runtime.
	Runtimes *fsm.ObjectMetrics
	// GardenerRequests counts the requests to the Gardener API. Its labels are verb and code.
	// code is the HTTP status, or "error" when no reply arrived.
	GardenerRequests *prometheus.CounterVec
	// GardenerCircuit is the state of the Gardener circuit breaker.
	GardenerCircuit prometheus.Gauge
	// KubeconfigExpiration is when the stored admin kubeconfig of each runtime expires. A
	// collector fills it in at each scrape, from the GardenerClusters' status, with Upstream.
	KubeconfigExpiration ScrapedGauge
	// Shadow are the metrics of a shadow.Recorder.
	Shadow Shadow
	// Upstream describes upstream's metrics.
	Upstream Upstream

	reg prometheus.Registerer
}

// Shadow are the metrics of a shadow.Recorder.
type Shadow struct {
	// PlannedWrites are the writes of the latest pass over an object. Its labels are
	// controller, namespace, name, target and kind.
	PlannedWrites *prometheus.GaugeVec
	// RefusedRequests counts the requests a shadow refused. Its label is target.
	RefusedRequests *prometheus.CounterVec
}

// Upstream describes upstream's metrics. A collector fills them in at each scrape.
type Upstream struct {
	// RuntimeState is the state of each Runtime.
	RuntimeState ScrapedGauge
	// ClusterState is the state of each GardenerCluster.
	ClusterState ScrapedGauge
	// KubeconfigExpiration is when each stored admin kubeconfig expires.
	KubeconfigExpiration ScrapedGauge
}

// ScrapedGauge describes a gauge whose series a collector builds at each scrape.
type ScrapedGauge struct {
	// Desc is the descriptor the collector describes and builds the series with.
	Desc *prometheus.Desc
	// Labels are the label names, in the order of the label values.
	Labels []string
}

// series returns the fsm name of m: its full name, with no namespace.
func series(m Metric) fsm.Series { return fsm.Series{Name: m.Name, Help: m.Help} }

// New builds every metric of the contract and registers it with reg. It fails when reg refuses
// one; then nothing stays registered. The collector of the series read from the cache
// (KubeconfigExpiration and Upstream) is registered later, with Register.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		GardenerRequests:     counterVec(gardenerRequests),
		GardenerCircuit:      prometheus.NewGauge(prometheus.GaugeOpts{Name: gardenerCircuit.Name, Help: gardenerCircuit.Help}),
		KubeconfigExpiration: scraped(kubeconfigExpiration),
		Shadow: Shadow{
			PlannedWrites:   gaugeVec(shadowPlannedWrites),
			RefusedRequests: counterVec(shadowRefusedRequests),
		},
		Upstream: Upstream{
			RuntimeState:         scraped(upstreamRuntimeState),
			ClusterState:         scraped(upstreamClusterState),
			KubeconfigExpiration: scraped(upstreamKubeconfigExpiration),
		},
		reg: reg,
	}
	t := &tracked{Registerer: reg}
	if err := m.register(t); err != nil {
		t.undo()
		return nil, err
	}
	return m, nil
}

// register builds the engine's metrics and registers them and the others with reg.
func (m *Metrics) register(reg prometheus.Registerer) error {
	var err error
	m.Steps, err = fsm.NewMetrics(reg, fsm.StepSeries{
		Duration: series(stepDuration), Failures: series(stepFailures),
		Retries: series(stepRetries), Exhausted: series(stepExhausted),
	})
	if err != nil {
		return fmt.Errorf("step metrics: %w", err)
	}
	m.Runtimes, err = fsm.NewObjectMetrics(reg, fsm.ObjectSeries{
		Failed: series(runtimeFailed), Retrying: series(runtimeRetrying),
		StepEntered: series(runtimeStepEntered), StepDeadline: series(runtimeStepDeadline),
		Labels:     []string{LabelRuntimeID, LabelRuntimeName, LabelShoot},
		StepLabels: []string{LabelRuntimeID},
	})
	if err != nil {
		return fmt.Errorf("runtime metrics: %w", err)
	}
	for _, c := range []prometheus.Collector{m.GardenerRequests, m.GardenerCircuit,
		m.Shadow.PlannedWrites, m.Shadow.RefusedRequests} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	return nil
}

// tracked is a registerer that remembers what it registered, so that New can undo it.
type tracked struct {
	prometheus.Registerer
	done []prometheus.Collector
}

// Register registers c and remembers it.
func (t *tracked) Register(c prometheus.Collector) error {
	if err := t.Registerer.Register(c); err != nil {
		return err //nolint:wrapcheck // a registerer passes its registry's error through.
	}
	t.done = append(t.done, c)
	return nil
}

// MustRegister registers each collector and panics when one is refused.
func (t *tracked) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

// undo unregisters everything t registered.
func (t *tracked) undo() {
	for _, c := range t.done {
		t.Unregister(c)
	}
}

// Register registers the collector of the per-object series with the registerer of New.
func (m *Metrics) Register(c prometheus.Collector) error {
	if err := m.reg.Register(c); err != nil {
		return fmt.Errorf("register collector: %w", err)
	}
	return nil
}

// IsAlreadyRegistered reports whether err says that a registerer already has the collector.
func IsAlreadyRegistered(err error) bool {
	var are prometheus.AlreadyRegisteredError
	return errors.As(err, &are)
}

func counterVec(m Metric) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: m.Name, Help: m.Help}, m.Labels)
}

func gaugeVec(m Metric) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: m.Name, Help: m.Help}, m.Labels)
}

func scraped(m Metric) ScrapedGauge {
	return ScrapedGauge{Desc: prometheus.NewDesc(m.Name, m.Help, m.Labels, nil), Labels: slices.Clone(m.Labels)}
}
