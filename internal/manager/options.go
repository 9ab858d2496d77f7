package manager

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/runtime-ops/infrastructure-manager/internal/controller"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
)

// Options is the configuration of a manager process. It embeds the options each part of the
// manager owns, with their defaults, flags and checks, and holds the process's own. Every field
// that has a flag is named after it, so a knob has one name, here and in its package.
type Options struct {
	// EngineOptions are the knobs both controllers share (package controller).
	controller.EngineOptions
	// RuntimeOptions are the Runtime controller's knobs.
	RuntimeOptions
	// GardenerClusterOptions are the GardenerCluster controller's knobs.
	GardenerClusterOptions
	// Limits are the rate limit, the request timeout and the circuit breaker of every call to
	// Gardener (package gardenclient).
	gardenclient.Limits
	// Settings are the landscape's: its converter configuration, or the project and the render
	// defaults (package landscape).
	landscape.Settings
	// MetricsBindAddress serves the metrics; "0" disables them.
	MetricsBindAddress string
	// MetricsSecure serves the metrics over HTTPS to callers that the API server authenticates
	// and allows to get /metrics; false serves plain HTTP to anyone who reaches the address.
	MetricsSecure bool
	// HealthProbeBindAddress serves the health probes; "0" disables them.
	HealthProbeBindAddress string
	// LeaderElect elects one active replica; the lease lives in LeaderElectionNamespace
	// (default: Namespace).
	LeaderElect             bool
	LeaderElectionNamespace string
	// UpstreamLeaderElectionID is the lease of upstream's manager, in the same namespace, that
	// a leader holds as well as its own, so that it never acts beside a replica of upstream's
	// manager; empty elects with the own lease alone.
	UpstreamLeaderElectionID string
	// Namespace is the manager's own namespace, where the ACL ConfigMap lives.
	Namespace string
	// SkipNameValidation allows several managers in one process (tests, the local environment).
	SkipNameValidation bool
	// PprofBindAddress serves net/http/pprof under /debug/pprof/; "0" disables it.
	PprofBindAddress string
	// GracefulShutdownTimeout is how long the manager's runnables get to stop once it is told
	// to stop; cmd/manager exits a little later even when they have not, so that a manager that
	// cannot reach its API server still ends on SIGTERM.
	GracefulShutdownTimeout time.Duration
	// Shadow runs the manager beside another one and writes nothing (package shadow): every
	// write is a dry run that is recorded, and the transport of every connection refuses any
	// other. It serves the recorded writes at /shadow/writes beside its metrics, exports none of
	// the series alerts read, sends no events and never takes part in a leader election.
	Shadow bool
	// RecordWrites records the writes of a manager that is no shadow, kept and served as a
	// shadow's, so that they can be compared with what a shadow planned.
	RecordWrites bool
	// Recorder keeps the writes of Shadow or RecordWrites; New makes one, with its metrics in
	// Metrics, when it is nil.
	Recorder *shadow.Recorder
	// Metrics are the metrics the manager updates. When it is nil, New builds them on
	// controller-runtime's registry, which the metrics endpoint serves. A registry takes each
	// metric once: a second manager in the same process needs the first one's Metrics, or its
	// own on a fresh registry.
	Metrics *metrics.Metrics
	// unsupported holds upstream's feature flags for features this manager lacks; New refuses
	// to start with one on.
	unsupported map[string]*bool
}

// RuntimeOptions are the Runtime controller's options. Options embeds them under this name:
// the GardenerCluster controller's are called Options too.
type RuntimeOptions = runtimectrl.Options

// GardenerClusterOptions are the GardenerCluster controller's options, embedded in Options
// under this name.
type GardenerClusterOptions = gardenercluster.Options

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		EngineOptions:            controller.DefaultEngineOptions(),
		RuntimeOptions:           runtimectrl.DefaultOptions(),
		GardenerClusterOptions:   gardenercluster.DefaultOptions(),
		Limits:                   gardenclient.DefaultLimits(),
		Settings:                 landscape.DefaultSettings(),
		MetricsBindAddress:       ":8443",
		MetricsSecure:            true,
		HealthProbeBindAddress:   ":8081",
		Namespace:                namespaceFromEnv(),
		PprofBindAddress:         "0",
		GracefulShutdownTimeout:  DefaultGracefulShutdownTimeout,
		UpstreamLeaderElectionID: UpstreamLeaderElectionID,
	}
}

// DefaultGracefulShutdownTimeout leaves the process, with cmd/manager's margin, within the
// Pod's terminationGracePeriodSeconds (30 in config/manager).
const DefaultGracefulShutdownTimeout = 20 * time.Second

// namespaceFromEnv is the namespace the Pod runs in, as the Deployment passes it, else
// kcp-system, where upstream runs.
func namespaceFromEnv() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "kcp-system"
}

// BindFlags registers a flag for every option, with o's values as defaults: the embedded
// options' through their own BindFlags, then the process's own, then upstream's names.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.EngineOptions.BindFlags(fs)
	o.RuntimeOptions.BindFlags(fs)
	o.GardenerClusterOptions.BindFlags(fs)
	o.Limits.BindFlags(fs)
	o.Settings.BindFlags(fs)
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of the metrics endpoint; 0 disables it")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve the metrics over HTTPS to callers allowed to get /metrics; false serves plain HTTP to anyone")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of the health probes; 0 disables them")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader, for more than one replica")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election lease (default: --namespace)")
	fs.StringVar(&o.UpstreamLeaderElectionID, "upstream-leader-election-id", o.UpstreamLeaderElectionID, "lease of upstream's manager that the leader holds as well as its own, so it never acts beside upstream; empty: the own lease only")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "the manager's namespace, which holds the ACL ConfigMap (default: $POD_NAMESPACE, else kcp-system)")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", o.PprofBindAddress, "address of the pprof endpoint (/debug/pprof/); 0 disables it")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", o.GracefulShutdownTimeout, "how long the controllers get to stop after SIGTERM; the process exits a few seconds later in any case")
	fs.BoolVar(&o.Shadow, "shadow", o.Shadow, "run beside another manager and write nothing: record the writes this one would make, served at "+shadow.HandlerPath+" beside the metrics")
	fs.BoolVar(&o.RecordWrites, "record-writes", o.RecordWrites, "record the writes the manager makes, served at "+shadow.HandlerPath+" as a shadow's are")
	bindUpstreamFlags(fs, o)
}

// validate refuses options the manager cannot run with, before it connects anywhere: the
// embedded options' own checks first, then the process's. The landscape is checked when it
// is loaded (Settings.Landscape).
func (o Options) validate() error {
	if err := o.EngineOptions.Validate(); err != nil {
		return err
	}
	if err := o.RuntimeOptions.Validate(); err != nil {
		return err
	}
	if o.GracefulShutdownTimeout <= 0 {
		return fmt.Errorf("--graceful-shutdown-timeout %s must be positive", o.GracefulShutdownTimeout)
	}
	if o.Shadow && o.LeaderElect {
		return errors.New("--shadow never leads, since it writes nothing, and takes no lease: drop --leader-elect")
	}
	if o.Shadow && o.RecordWrites {
		return errors.New("--shadow records the writes it would make; --record-writes is for a manager that makes them")
	}
	if id := o.UpstreamLeaderElectionID; id != "" {
		// A name the API server refuses would keep every replica from leading, with nothing
		// but a log line a retry period.
		if errs := validation.IsDNS1123Subdomain(id); len(errs) > 0 {
			return fmt.Errorf("--upstream-leader-election-id %q is no lease name: %s", id, strings.Join(errs, "; "))
		}
		if id == LeaderElectionID {
			return fmt.Errorf("--upstream-leader-election-id %q is this manager's own lease", id)
		}
	}
	return o.unsupportedFeatures()
}
