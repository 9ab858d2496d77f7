package manager

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// Options is the configuration of a manager process. It embeds the options each part of the
// manager owns, with their defaults, flags and checks, and holds the process's own. Every field
// is named after its flag, so a knob has one name, here and in its package.
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
	// MetricsAddr serves the metrics; "0" disables them.
	MetricsAddr string
	// MetricsSecure serves the metrics over HTTPS to callers that the API server authenticates
	// and allows to get /metrics; false serves plain HTTP to anyone who reaches the address.
	MetricsSecure bool
	// ProbeAddr serves the health probes; "0" disables them.
	ProbeAddr string
	// LeaderElection elects one active replica; the lease lives in LeaderElectionNamespace
	// (default: Namespace).
	LeaderElection          bool
	LeaderElectionNamespace string
	// UpstreamLeaderElectionID is the lease of upstream's manager, in the same namespace, that
	// a leader holds as well as its own, so that it never acts beside a replica of upstream's
	// manager; empty elects with the own lease alone.
	UpstreamLeaderElectionID string
	// Namespace is the manager's own namespace, where the ACL ConfigMap lives.
	Namespace string
	// SkipNameValidation allows several managers in one process (tests, the local environment).
	SkipNameValidation bool
	// PprofAddr serves net/http/pprof under /debug/pprof/; "0" disables it.
	PprofAddr string
	// ShutdownTimeout is how long the manager's runnables get to stop once it is told to stop
	// (controller-runtime's GracefulShutdownTimeout); cmd/manager exits a little later even when
	// they have not, so that a manager that cannot reach its API server still ends on SIGTERM.
	ShutdownTimeout time.Duration
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

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		EngineOptions:            controller.DefaultEngineOptions(),
		RuntimeOptions:           runtimectrl.DefaultOptions(),
		GardenerClusterOptions:   gardenercluster.DefaultOptions(),
		Limits:                   gardenclient.DefaultLimits(),
		Settings:                 landscape.DefaultSettings(),
		MetricsAddr:              ":8443",
		MetricsSecure:            true,
		ProbeAddr:                ":8081",
		Namespace:                namespaceFromEnv(),
		PprofAddr:                "0",
		ShutdownTimeout:          DefaultShutdownTimeout,
		UpstreamLeaderElectionID: UpstreamLeaderElectionID,
	}
}

// RuntimeOptions are the Runtime controller's options. Options embeds them under this name:
// the GardenerCluster controller's are called Options too.
type RuntimeOptions = runtimectrl.Options

// GardenerClusterOptions are the GardenerCluster controller's options, embedded in Options
// under this name.
type GardenerClusterOptions = gardenercluster.Options

// DefaultShutdownTimeout leaves the process, with cmd/manager's margin, within the Pod's
// terminationGracePeriodSeconds (30 in config/manager).
const DefaultShutdownTimeout = 20 * time.Second

// namespaceFromEnv is the namespace the Pod runs in, as the Deployment passes it, else
// kcp-system, where upstream runs.
func namespaceFromEnv() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "kcp-system"
}

// BindFlags registers a flag for every option: the embedded options' through their own
// BindFlags, then the process's own and upstream's names, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.EngineOptions.BindFlags(fs)
	o.RuntimeOptions.BindFlags(fs)
	o.GardenerClusterOptions.BindFlags(fs)
	o.Limits.BindFlags(fs)
	o.Settings.BindFlags(fs)
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of the metrics endpoint; 0 disables it")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve the metrics over HTTPS to callers allowed to get /metrics; false serves plain HTTP to anyone")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address of the health probes; 0 disables them")
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "elect a leader, for more than one replica")
	fs.BoolVar(&o.Shadow, "shadow", o.Shadow, "run beside another manager and write nothing: record the writes this one would make, served at "+shadow.HandlerPath+" beside the metrics")
	fs.BoolVar(&o.RecordWrites, "record-writes", o.RecordWrites, "record the writes the manager makes, served at "+shadow.HandlerPath+" as a shadow's are")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election lease (default: --namespace)")
	fs.StringVar(&o.UpstreamLeaderElectionID, "upstream-leader-election-id", o.UpstreamLeaderElectionID, "lease of upstream's manager that the leader holds as well as its own, so it never acts beside upstream; empty: the own lease only")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "the manager's namespace, which holds the ACL ConfigMap (default: $POD_NAMESPACE, else kcp-system)")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "address of the pprof endpoint (/debug/pprof/); 0 disables it")
	fs.DurationVar(&o.ShutdownTimeout, "graceful-shutdown-timeout", o.ShutdownTimeout, "how long the controllers get to stop after SIGTERM; the process exits a few seconds later in any case")
	bindUpstreamFlags(fs, o)
}

// addMetricsAndChecks registers upstream's metrics, but in a shadow, and the health checks.
func addMetricsAndChecks(mgr ctrl.Manager, o Options) error {
	// A second manager that shares o.Metrics (tests) keeps the first one's collector.
	if !o.Shadow {
		c := newUpstreamMetrics(mgr.GetClient(), o.Metrics.Upstream, o.KubeconfigLifetime, o.KubeconfigRotateAfter)
		if err := o.Metrics.Register(c); err != nil && !metrics.IsAlreadyRegistered(err) {
			return fmt.Errorf("register upstream's metrics: %w", err)
		}
	}
	if o.ProbeAddr == "0" {
		return nil
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("liveness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("informers", CacheSynced(mgr.GetCache())); err != nil {
		return fmt.Errorf("readiness check: %w", err)
	}
	return nil
}

// recorder returns the Recorder of the writes, nil when neither Shadow nor RecordWrites is set.
func (o Options) recorder() *shadow.Recorder {
	switch {
	case !o.Shadow && !o.RecordWrites:
		return nil
	case o.Recorder != nil:
		return o.Recorder
	}
	return shadow.NewRecorder(o.Metrics.Shadow, o.RecordWrites)
}

// guarded returns cfg, and the wrapper of the garden's transport, as a shadow's: each refuses
// any request that could change state. Without Shadow, cfg as it is and no wrapper.
func (o Options) guarded(cfg *rest.Config, rec *shadow.Recorder) (*rest.Config, func(http.RoundTripper) http.RoundTripper) {
	if !o.Shadow {
		return cfg, nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(rec.Guard(shadow.TargetControlPlane))
	return cfg, rec.Guard(shadow.TargetGarden)
}

// recorded returns the clients the steps write through: the manager's and the garden's, with
// their writes recorded by rec when it is not nil.
func recorded(rec *shadow.Recorder, mgr ctrl.Manager, garden cluster.Cluster) (client.Client, client.Client) {
	if rec == nil {
		return mgr.GetClient(), garden.GetClient()
	}
	return rec.Client(mgr.GetClient(), mgr.GetAPIReader(), shadow.TargetControlPlane),
		rec.Client(garden.GetClient(), garden.GetAPIReader(), shadow.TargetGarden)
}

// engineObservers are the engines' events and metrics: none of either in a shadow. What a shadow
// decides lives in no status, so its step and object series would tell of runtimes as no manager
// left them, and alerts read them; an event is a write.
func (o Options) engineObservers() []fsm.Option {
	if !o.Shadow {
		return []fsm.Option{fsm.WithMetrics(o.Metrics.Steps)}
	}
	return []fsm.Option{fsm.WithRecorder(fsm.RecorderFunc(func(runtime.Object, string, string, string) {})),
		fsm.WithObjectMetrics(nil, nil)}
}

// NewScheme returns the scheme of every type the manager reads or writes.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, infrav1.AddToScheme, gardencorev1beta1.AddToScheme, authenticationv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("scheme: %w", err)
		}
	}
	return s, nil
}

// validate refuses options the manager cannot run with, before it connects anywhere.
func (o Options) validate() error {
	if err := o.EngineOptions.Validate(); err != nil {
		return err
	}
	if err := o.RuntimeOptions.Validate(); err != nil {
		return err
	}
	if o.ShutdownTimeout <= 0 {
		return fmt.Errorf("--graceful-shutdown-timeout %s must be positive", o.ShutdownTimeout)
	}
	if o.Shadow && o.LeaderElection {
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

// prepared returns the options, checked, and the landscape they load. The options take the
// landscape's project. Their Metrics are built on controller-runtime's registry when they have
// none.
func (o Options) prepared() (Options, *landscape.Landscape, error) {
	if err := o.validate(); err != nil {
		return o, nil, err
	}
	l, err := o.Landscape()
	if err != nil {
		return o, nil, err
	}
	if l != nil {
		o.GardenerProject = l.Config.Converter.Gardener.ProjectName
	}
	if o.Metrics == nil {
		if o.Metrics, err = metrics.New(ctrlmetrics.Registry); err != nil {
			return o, nil, fmt.Errorf("metrics on controller-runtime's registry: %w", err)
		}
	}
	return o, l, nil
}

// New returns a manager, not yet started, with both controllers: cfg reaches the cluster the
// Runtimes live in, garden the Gardener project.
func New(cfg, garden *rest.Config, o Options) (ctrl.Manager, error) {
	o, l, err := o.prepared()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	rec := o.recorder()
	cfg, gardenGuard := o.guarded(cfg, rec)
	leaseNamespace := cmp.Or(o.LeaderElectionNamespace, o.Namespace)
	lock, err := newLeaderLock(cfg, o.LeaderElection, leaseNamespace, o.UpstreamLeaderElectionID)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 o.metricsServer(rec),
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.PprofAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: leaseNamespace,
		// The joint lease with upstream's manager, unless --upstream-leader-election-id is empty.
		LeaderElectionResourceLockInterface: lock,
		// A replica that stops hands the lease over at once instead of letting it expire.
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(o.ShutdownTimeout),
		Controller:                    config.Controller{SkipNameValidation: ptr.To(o.SkipNameValidation)},
		// Runtimes, GardenerClusters, the kubeconfig Secrets and the ACL ConfigMap all live in
		// the manager's namespace: nothing else is cached, nor readable through the cache, and
		// the manager needs no permission outside it (rbac.go).
		// No step reads managedFields, which are a large part of every object: the cache keeps
		// the objects without them (ControlPlaneTransform).
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
			DefaultTransform:  ControlPlaneTransform,
		},
		// The kubeconfig Secrets are read from the API server when a step needs one: a cache
		// of them would hold every runtime's admin credentials in memory, a seventh of a Ready
		// fleet's heap, for reads that come minutes apart per runtime.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		// The manager's own kinds are mapped without discovery: the Runtime index is registered
		// before the API server is asked anything.
		MapperProvider: controlPlaneRESTMapper,
	})
	if err != nil {
		return nil, fmt.Errorf("create the controller manager: %w", err)
	}
	conn, err := gardenclient.New(garden, o.gardenOptions(scheme, gardenGuard))
	if err != nil {
		return nil, err
	}
	gardenCluster := conn.Cluster
	if err := mgr.Add(gardenCluster); err != nil {
		return nil, fmt.Errorf("add garden cluster: %w", err)
	}
	if err := mgr.Add(conn.Prober); err != nil {
		return nil, fmt.Errorf("add circuit prober: %w", err)
	}
	renderOpts := o.RenderOptions(l)
	ns := renderOpts.Namespace
	// The engines' options that are the manager's: the circuit breaker's gate and the observers.
	engineOpts := append([]fsm.Option{fsm.WithGate(conn.Breaker)}, o.engineObservers()...)
	cpClient, gardenClient := recorded(rec, mgr, gardenCluster)
	err = runtimectrl.Setup(mgr, gardenCluster, runtimectrl.Config{
		Options:         o.RuntimeOptions,
		EngineOptions:   o.EngineOptions,
		Client:          cpClient,
		Garden:          gardenClient,
		Recorder:        rec,
		Series:          o.Metrics.Runtimes,
		Shadow:          o.Shadow,
		GardenNamespace: ns,
		Namespace:       o.Namespace,
		Render:          renderOpts,
		ACLConfigMap:    o.ACLConfigMap(l, o.Namespace),
	}, engineOpts...)
	if err != nil {
		return nil, err
	}
	err = gardenercluster.Setup(mgr, gardenercluster.Config{
		Options: o.GardenerClusterOptions, EngineOptions: o.EngineOptions,
		Client: cpClient, Kubeconfigs: gardenercluster.GardenKubeconfigs{Garden: gardenClient, Namespace: ns}, Recorder: rec,
		Expiration: o.Metrics.KubeconfigExpiration,
	}, engineOpts...)
	if err != nil {
		return nil, err
	}
	if err := addMetricsAndChecks(mgr, o); err != nil {
		return nil, err
	}
	return mgr, nil
}

// gardenOptions are the options of the connection to the Gardener project. With
// UnwatchedShoots, shoots and the structured-auth ConfigMaps come from the API server. Every
// poll of a waiting step and every re-check is then a request to Gardener.
func (o Options) gardenOptions(scheme *runtime.Scheme, guard func(http.RoundTripper) http.RoundTripper) gardenclient.Options {
	g := gardenclient.Options{
		Limits: o.Limits, Namespace: "garden-" + o.GardenerProject, Scheme: scheme,
		Requests: o.Metrics.GardenerRequests, Circuit: o.Metrics.GardenerCircuit, Guard: guard,
	}
	if o.UnwatchedShoots {
		g.Uncached = []client.Object{&gardencorev1beta1.Shoot{}, &corev1.ConfigMap{}}
	}
	return g
}

// controlPlaneRESTMapper maps the kinds the manager keeps in its namespace without asking the
// API server, and anything else through discovery.
func controlPlaneRESTMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	static := meta.NewDefaultRESTMapper([]schema.GroupVersion{infrav1.GroupVersion, corev1.SchemeGroupVersion})
	static.Add(infrav1.GroupVersion.WithKind("Runtime"), meta.RESTScopeNamespace)
	static.Add(infrav1.GroupVersion.WithKind("GardenerCluster"), meta.RESTScopeNamespace)
	static.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	static.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	dynamic, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("control plane REST mapper: %w", err)
	}
	return meta.FirstHitRESTMapper{MultiRESTMapper: meta.MultiRESTMapper{static, dynamic}}, nil
}
