package gardensim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admin"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/cloudprofiles"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/controllerregistrations"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/garden"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/providerwebhook"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/shootcluster"
)

// Simulator is a running Gardener simulator. Its methods are safe for
// concurrent use; Stop ends it.
type Simulator struct {
	opts     options
	cp       *garden.Garden
	garden   *rest.Config
	client   client.Client
	faults   *fault.Injector
	requests *proxy.RequestLog
	rules    *lifecycle.Rules
	pool     *shootcluster.Pool
	proxy    *proxy.Server
	webhook  *providerwebhook.Server
	admin    *http.Server
	adminURL string

	stopManager context.CancelFunc
	managerDone chan error
	stopOnce    sync.Once
	stopErr     error
}

// Start boots a simulator and returns once it serves: the garden API server
// with its projects, CloudProfiles, ControllerRegistrations and Seeds, the
// lifecycle controller, the front proxy and the admin API. ctx bounds the start only; the simulator runs until Stop. On error
// everything already started is stopped again.
func Start(ctx context.Context, opts ...Option) (*Simulator, error) {
	o := defaults()
	for _, opt := range opts {
		opt(&o)
	}
	if o.token == "" {
		o.token = randomToken()
	}
	s := &Simulator{
		opts:     o,
		faults:   fault.NewInjector(fault.WithSeed(o.seed)),
		requests: proxy.NewRequestLog(0),
		rules:    lifecycle.NewRules(o.seed + 1),
	}
	if err := s.start(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

func (s *Simulator) start(ctx context.Context) error {
	if err := s.setRules(s.opts.scenario); err != nil {
		return err
	}
	began := time.Now()
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	if s.cp, err = startGarden(ctx, s.opts, scheme); err != nil {
		return err
	}
	s.garden, s.client = s.cp.Config, s.cp.Client
	if err := s.furnishGarden(ctx); err != nil {
		return err
	}
	if err := s.startScheduler(ctx); err != nil {
		return err
	}
	if err := s.startProviderWebhook(ctx); err != nil {
		return err
	}
	s.pool = shootcluster.NewPool(s.cp.EtcdURL(),
		shootcluster.WithMode(s.opts.shootMode),
		shootcluster.WithAssets(s.opts.assets),
		shootcluster.WithOutput(s.opts.processOutput),
		shootcluster.WithLogger(s.opts.log.WithName("shoot-clusters")))
	if err := s.startController(ctx, scheme); err != nil {
		return err
	}
	if err := s.startProxy(); err != nil {
		return err
	}
	if err := s.startAdmin(); err != nil {
		return err
	}
	s.opts.log.Info("Gardener simulator started", "api", s.proxy.URL(), "admin", s.adminURL,
		"shootMode", s.opts.shootMode, "scenario", s.opts.scenario.Name, "startedIn", time.Since(began).Round(time.Millisecond))
	return nil
}

// furnishGarden writes what a landscape's garden holds before the first shoot: the projects,
// their bindings, the default domain, the cloud profiles, the ControllerRegistrations and the
// seeds.
func (s *Simulator) furnishGarden(ctx context.Context) error {
	if err := createProjects(ctx, s.client, s.opts.projects, s.opts.tolerations); err != nil {
		return err
	}
	if err := createSecretBindings(ctx, s.client, s.opts.projects, s.opts.secretBindings); err != nil {
		return err
	}
	if err := createDefaultDomain(ctx, s.client, s.opts.defaultDomain); err != nil {
		return err
	}
	profiles, err := cloudprofiles.Read()
	if err != nil {
		return err
	}
	if err := createCloudProfiles(ctx, s.client, profiles); err != nil {
		return err
	}
	registrations, err := controllerregistrations.Read()
	if err != nil {
		return err
	}
	if err := createControllerRegistrations(ctx, s.client, registrations, s.opts.unregisteredExtensions); err != nil {
		return err
	}
	unready := append(slices.Clone(s.opts.unreadyRegions), s.opts.scenario.UnreadySeedRegions...)
	return createSeeds(ctx, s.client, profiles, unready)
}

// startScheduler runs gardener-scheduler against the garden.
func (s *Simulator) startScheduler(ctx context.Context) error {
	began := time.Now()
	if err := s.cp.StartScheduler(ctx, garden.DefaultSchedulerBinary(gardenerAPIServer(s.opts)), s.opts.processOutput, 0); err != nil {
		return fmt.Errorf("start gardener-scheduler: %w", err)
	}
	s.opts.log.Info("gardener-scheduler schedules the garden's shoots", "startedIn", time.Since(began).Round(time.Millisecond))
	return nil
}

// startProviderWebhook runs the provider extensions' shoot validation and
// registers it with the garden.
func (s *Simulator) startProviderWebhook(ctx context.Context) error {
	w, err := providerwebhook.Start(ctx, providerwebhook.Options{
		Dir: s.opts.gardenerAssets, Garden: s.garden, Output: s.opts.processOutput,
	})
	if err != nil {
		return fmt.Errorf("start provider extensions' admission: %w", err)
	}
	s.webhook = w
	if err := providerwebhook.Register(ctx, s.client, w.Configuration(), ProjectNamespace(s.opts.projects[0])); err != nil {
		return fmt.Errorf("register provider extensions' admission: %w", err)
	}
	return nil
}

// startController runs the lifecycle controller in its own manager.
func (s *Simulator) startController(ctx context.Context, scheme *runtime.Scheme) error {
	mgr, err := ctrl.NewManager(s.garden, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 s.opts.log.WithName("gardenlet"),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("build lifecycle manager: %w", err)
	}
	r := lifecycle.NewReconciler(mgr.GetClient(),
		lifecycle.WithReader(mgr.GetAPIReader()),
		lifecycle.WithClusters(s.pool),
		lifecycle.WithRules(s.rules),
		lifecycle.WithOperationDuration(s.opts.operationDuration),
		lifecycle.WithRetryDelay(s.opts.errorRetryDelay),
		lifecycle.WithProgressInterval(s.opts.progressInterval))
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	mgrCtx, cancel := context.WithCancel(context.Background())
	s.stopManager, s.managerDone = cancel, make(chan error, 1)
	go func() { s.managerDone <- mgr.Start(mgrCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("lifecycle controller cache did not sync")
	}
	return nil
}

// startProxy serves the Gardener API the manager talks to.
func (s *Simulator) startProxy() error {
	p, err := proxy.New(s.garden,
		proxy.WithToken(s.opts.token, s.opts.user),
		proxy.WithFaults(s.faults),
		proxy.WithRequestLog(s.requests),
		proxy.WithKubeconfigs(s.pool),
		proxy.WithLogger(s.opts.log.WithName("proxy")))
	if err != nil {
		return fmt.Errorf("build front proxy: %w", err)
	}
	if s.proxy, err = proxy.Serve(s.opts.listen, p, s.opts.log.WithName("proxy")); err != nil {
		return fmt.Errorf("serve front proxy: %w", err)
	}
	return nil
}

// startAdmin serves the admin API over plain HTTP, if it has an address.
func (s *Simulator) startAdmin() error {
	if s.opts.adminListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.opts.adminListen)
	if err != nil {
		return fmt.Errorf("listen for admin API on %s: %w", s.opts.adminListen, err)
	}
	s.admin = &http.Server{Handler: admin.Handler(s, s, s), ReadHeaderTimeout: 10 * time.Second}
	s.adminURL = "http://" + ln.Addr().String()
	go func() {
		if err := s.admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.opts.log.Error(err, "Admin API stopped")
		}
	}()
	return nil
}

// Stop ends the simulator: the proxy and admin API, the lifecycle
// controller, every shoot cluster, then the garden API server and etcd. It
// is idempotent.
func (s *Simulator) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.proxy != nil {
			errs = append(errs, s.proxy.Close())
		}
		if s.admin != nil {
			errs = append(errs, wrap("close admin API", s.admin.Close()))
		}
		if s.stopManager != nil {
			s.stopManager()
			errs = append(errs, wrap("stop lifecycle controller", <-s.managerDone))
		}
		if s.pool != nil {
			errs = append(errs, s.pool.Close())
		}
		if s.webhook != nil {
			errs = append(errs, wrap("stop provider extensions' admission", s.webhook.Stop()))
		}
		if s.cp != nil {
			errs = append(errs, wrap("stop garden API server", s.cp.Stop()))
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// wrap adds context to err, keeping nil.
func wrap(context string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", context, err)
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register Kubernetes types: %w", err)
	}
	if err := gardencorev1beta1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register Gardener types: %w", err)
	}
	if err := securityv1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register Gardener security types: %w", err)
	}
	return scheme, nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
