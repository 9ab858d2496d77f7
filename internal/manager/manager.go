package manager

import (
	"cmp"
	"context"
	"fmt"
	"net/http"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// addMetricsAndChecks registers the metrics read from the cache (not in a shadow: the manager it
// shadows exports them) and the health checks.
func addMetricsAndChecks(mgr ctrl.Manager, o Options) error {
	// A second manager that shares o.Metrics (tests) keeps the first one's collector.
	if !o.Shadow {
		// The controllers, set up before, watch both kinds: the metrics add a handler to
		// their informers, no informer of their own.
		fleet, err := watchFleet(context.Background(), mgr.GetCache())
		if err != nil {
			return fmt.Errorf("read the fleet for the metrics: %w", err)
		}
		c := newFleetMetrics(fleet, o.Metrics, o.KubeconfigLifetime, o.KubeconfigRotateAfter)
		if err := o.Metrics.Register(c); err != nil && !metrics.IsAlreadyRegistered(err) {
			return fmt.Errorf("register the metrics read from the cache: %w", err)
		}
	}
	if o.HealthProbeBindAddress == "0" {
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
// Runtimes live in, garden the Gardener project. It only wires: each part takes its own options.
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
	mgr, err := o.newControllerManager(cfg, scheme, rec)
	if err != nil {
		return nil, err
	}
	conn, err := addGarden(mgr, garden, o.gardenOptions(scheme, gardenGuard))
	if err != nil {
		return nil, err
	}
	if err := o.setupControllers(mgr, conn, rec, l); err != nil {
		return nil, err
	}
	if err := addMetricsAndChecks(mgr, o); err != nil {
		return nil, err
	}
	return mgr, nil
}

// newControllerManager returns controller-runtime's manager on cfg, with its lease, caches,
// metrics and probes.
func (o Options) newControllerManager(cfg *rest.Config, scheme *runtime.Scheme, rec *shadow.Recorder) (ctrl.Manager, error) {
	leaseNamespace := cmp.Or(o.LeaderElectionNamespace, o.Namespace)
	lock, err := newLeaderLock(cfg, o.LeaderElect, leaseNamespace, o.UpstreamLeaderElectionID)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 o.metricsServer(rec),
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: leaseNamespace,
		// The joint lease with upstream's manager, unless --upstream-leader-election-id is empty.
		LeaderElectionResourceLockInterface: lock,
		// A replica that stops hands the lease over at once instead of letting it expire.
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(o.GracefulShutdownTimeout),
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
		// No Secret is read through the cache: the Runtime controller reads the kubeconfig
		// Secrets from a watch of their own, which keeps each as the connection it describes
		// and not as the Secret (runtimectrl.KubeconfigSecrets), and every other Secret read
		// goes to the API server.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		// The manager's own kinds are mapped without discovery: the Runtime index is registered
		// before the API server is asked anything.
		MapperProvider: controlPlaneRESTMapper,
	})
	if err != nil {
		return nil, fmt.Errorf("create the controller manager: %w", err)
	}
	return mgr, nil
}

// addGarden connects to the Gardener project and lets mgr run the connection's cache and
// circuit prober.
func addGarden(mgr ctrl.Manager, garden *rest.Config, opts gardenclient.Options) (*gardenclient.Connection, error) {
	conn, err := gardenclient.New(garden, opts)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(conn.Cluster); err != nil {
		return nil, fmt.Errorf("add garden cluster: %w", err)
	}
	if err := mgr.Add(conn.Prober); err != nil {
		return nil, fmt.Errorf("add circuit prober: %w", err)
	}
	return conn, nil
}

// setupControllers registers both controllers with mgr. Each builds its engine from its own
// options and the shared ones; the manager adds the circuit breaker's gate and its observers.
// The steps write through the clients rec records, when it is not nil.
func (o Options) setupControllers(mgr ctrl.Manager, conn *gardenclient.Connection, rec *shadow.Recorder, l *landscape.Landscape) error {
	render := o.RenderOptions(l)
	engineOpts := append([]fsm.Option{fsm.WithGate(conn.Breaker)}, o.engineObservers()...)
	cpClient, gardenClient := recorded(rec, mgr, conn.Cluster)
	kubeconfigs, err := runtimectrl.WatchKubeconfigSecrets(mgr.GetConfig(), mgr.GetHTTPClient(), o.Namespace, mgr.GetAPIReader())
	if err != nil {
		return err
	}
	if err := mgr.Add(kubeconfigs); err != nil {
		return fmt.Errorf("add the watch of kubeconfig Secrets: %w", err)
	}
	err = runtimectrl.Setup(mgr, conn.Cluster, runtimectrl.Config{
		Options: o.RuntimeOptions, EngineOptions: o.EngineOptions, Kubeconfigs: kubeconfigs,
		Client: cpClient, Garden: gardenClient, GardenReader: conn.Cluster.GetAPIReader(), Recorder: rec, Series: o.Metrics.Runtimes, Shadow: o.Shadow,
		GardenNamespace: render.Namespace, Namespace: o.Namespace, Render: render, ACLConfigMap: o.ACLConfigMap(l, o.Namespace),
	}, engineOpts...)
	if err != nil {
		return err
	}
	return gardenercluster.Setup(mgr, gardenercluster.Config{
		Options: o.GardenerClusterOptions, EngineOptions: o.EngineOptions,
		Client: cpClient, Kubeconfigs: gardenercluster.GardenKubeconfigs{Garden: gardenClient, Namespace: render.Namespace},
		Recorder: rec,
	}, engineOpts...)
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
// API server, and anything else through discovery. It maps their lists too, as discovery does:
// the cache asks for the list's kind on every List from it (whether the list is namespaced),
// and a static mapper without it answered with an error, after which the dynamic one looked the
// kind up again: about 17 KB of garbage per re-check of a Runtime in a 5,000-runtime profile.
func controlPlaneRESTMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	static := meta.NewDefaultRESTMapper([]schema.GroupVersion{infrav1.GroupVersion, corev1.SchemeGroupVersion})
	for _, gvk := range []schema.GroupVersionKind{
		infrav1.GroupVersion.WithKind("Runtime"),
		infrav1.GroupVersion.WithKind("GardenerCluster"),
		corev1.SchemeGroupVersion.WithKind("Secret"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	} {
		static.Add(gvk, meta.RESTScopeNamespace)
		static.Add(gvk.GroupVersion().WithKind(gvk.Kind+"List"), meta.RESTScopeNamespace)
	}
	dynamic, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("control plane REST mapper: %w", err)
	}
	return meta.FirstHitRESTMapper{MultiRESTMapper: meta.MultiRESTMapper{static, dynamic}}, nil
}
