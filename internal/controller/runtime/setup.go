package runtime

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// One call runs at most chainSteps steps that move on, and starts none after chainFor.
const (
	chainSteps = 16
	chainFor   = 5 * time.Second
)

// Setup registers the Runtime controller with the manager. Shoots are watched in the garden
// project, so a waiting step wakes when its shoot changes instead of at its next poll.
// With cfg.UnwatchedShoots they are not watched, and only the polls look at a shoot. The engine
// gets the controller's own options, then cfg's shared ones (FSMOptions), then opts: the
// caller's, such as the manager's gate and observers.
func Setup(mgr ctrl.Manager, garden cluster.Cluster, cfg Config, opts ...fsm.Option) error {
	if cfg.Kubeconfigs == nil {
		cfg.Kubeconfigs = ReadKubeconfigSecrets(cfg.Client)
	}
	if cfg.Clusters == nil {
		cfg.Clusters = NewCachedClusters(cfg.Kubeconfigs, runtimeClients(cfg), cmp.Or(cfg.RuntimeClientCacheSize, DefaultRuntimeClientCacheSize))
	}
	s := steps{Config: cfg}
	if err := indexRuntimes(context.Background(), mgr.GetCache(), IndexRuntimeID, runtimeIDOf); err != nil {
		return err
	}
	if err := indexRuntimes(context.Background(), mgr.GetCache(), IndexShootName, shootNameOf); err != nil {
		return err
	}
	opts = slices.Concat([]fsm.Option{
		fsm.WithRecorder(fsm.EventsRecorder(mgr.GetEventRecorder("infrastructure-manager"))),
		fsm.WithObjectMetrics(cfg.Series, runtimeLabels),
		fsm.WithLogValues(runtimeLogValues),
		fsm.WithRetryAnnotation(infrav1.RetryRequestedAtAnnotation),
		fsm.WithInputs(s.inputs),
		// The steps read what they need from the garden and the runtime cluster, never their
		// predecessor's persisted status: steps that move on run in one call, and one status
		// write records where the Runtime got to.
		fsm.WithChain(chainSteps, chainFor),
		// A Ready Runtime is checked again from its start step (--runtime-recheck-interval).
		fsm.WithResync(cmp.Or(cfg.RuntimeRecheckInterval, DefaultRuntimeRecheckInterval)),
	}, cfg.FSMOptions(), opts)
	engine, err := fsm.New(NewMachine(cfg), opts...)
	if err != nil {
		return fmt.Errorf("runtime machine: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if acl := cfg.ACLConfigMap; acl.Name != "" {
		// A changed access list reaches every runtime that restricts its API server now, not at
		// its next re-check.
		b = b.Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(s.aclRuntimes),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == acl.Namespace && o.GetName() == acl.Name
			})))
	}
	if !cfg.UnwatchedShoots {
		b = b.WatchesRawSource(source.Kind(garden.GetCache(), client.Object(&gardencorev1beta1.Shoot{}),
			gardenclient.ShootEvents(shootEvents(cmp.Or(cfg.ShootProgressRefresh, DefaultShootProgressRefresh), cfg.Namespace))))
	}
	r := onePassReads(fsm.NewReconciler(cfg.Client, engine, func() *infrav1.Runtime { return &infrav1.Runtime{} },
		fsm.WithAPIReader(mgr.GetAPIReader())))
	if cfg.Recorder != nil {
		r = cfg.Recorder.Reconciler(ControllerName, r)
	}
	err = b.
		Named(ControllerName).
		For(&infrav1.Runtime{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&infrav1.GardenerCluster{}, inFlight(handler.EnqueueRequestsFromMapFunc(byRuntimeLabels))).
		WithOptions(controller.Options{MaxConcurrentReconciles: cfg.Workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build runtime controller: %w", err)
	}
	return nil
}

// byRuntimeLabels maps an object the controller created to its Runtime.
func byRuntimeLabels(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[LabelRuntimeName]
	if name == "" {
		return nil
	}
	ns := o.GetLabels()[LabelRuntimeNamespace]
	if ns == "" {
		ns = o.GetNamespace()
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// RuntimeRequestTimeout bounds each request to a runtime's cluster, so a hung connection to one
// runtime cannot hold a worker.
const RuntimeRequestTimeout = 10 * time.Second

// runtimeClients returns how Setup connects to runtime clusters: ConfigClient, with the writes
// recorded when cfg has a Recorder, and as a shadow's when cfg.Shadow is set.
func runtimeClients(cfg Config) ClientFunc {
	if cfg.Recorder == nil {
		return ConfigClient
	}
	var guard func(http.RoundTripper) http.RoundTripper
	if cfg.Shadow {
		guard = cfg.Recorder.Guard(shadow.TargetRuntime)
	}
	return func(_ context.Context, rc *rest.Config) (client.Client, error) {
		c, err := newConfigClient(rc, guard)
		if err != nil {
			return nil, err
		}
		return cfg.Recorder.Client(c, c, shadow.TargetRuntime), nil
	}
}

// ConfigClient connects to a runtime cluster with cfg, a connection that
// kubeconfig.RESTConfig made from an admin kubeconfig: inline credentials and CA data only.
// It changes cfg.
func ConfigClient(_ context.Context, cfg *rest.Config) (client.Client, error) {
	return newConfigClient(cfg, nil)
}

// newConfigClient is ConfigClient with wrap, when not nil, around its transport.
func newConfigClient(cfg *rest.Config, wrap func(http.RoundTripper) http.RoundTripper) (client.Client, error) {
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	cfg.Timeout = RuntimeRequestTimeout
	// HTTP/1.1: a pass makes a few requests one after another, and an HTTP/2 connection costs
	// more than it gives here. Its health check timer holds a closed connection, and the
	// client's transport, for 30 seconds: at a fleet's re-check rate that was most of the heap.
	cfg.NextProtos = []string{"http/1.1"}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("runtime client: %w", err)
	}
	// The kinds the steps write are mapped without asking the cluster; anything else is found
	// through discovery, which the dynamic mapper does only when a kind needs it. A discovery
	// mapper of every runtime cluster was most of a fleet's memory and a re-check's requests.
	dynamic, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("runtime client mapper: %w", err)
	}
	mapper := meta.FirstHitRESTMapper{MultiRESTMapper: meta.MultiRESTMapper{runtimeKinds, dynamic}}
	c, err := client.New(cfg, client.Options{HTTPClient: hc, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("runtime client: %w", err)
	}
	return kubeconfigClient{Client: c, http: hc}, nil
}

// kubeconfigClient is a runtime cluster's client with the HTTP client under it, whose idle
// connections CachedClusters closes when it drops the client.
type kubeconfigClient struct {
	client.Client
	http *http.Client
}

// CloseIdleConnections closes the connections that no request uses. client-go wraps the
// transport in round trippers that do not pass http.Client's call on, so the transport is
// unwrapped first.
func (c kubeconfigClient) CloseIdleConnections() { utilnet.CloseIdleConnectionsFor(c.http.Transport) }

// runtimeKinds maps the kinds the steps read and write in a runtime cluster.
var runtimeKinds = func() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	m.Add(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), meta.RESTScopeRoot)
	m.Add(gardener.OpenIDConnectGVK, meta.RESTScopeRoot)
	return m
}()
