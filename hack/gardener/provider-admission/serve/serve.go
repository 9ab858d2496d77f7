// Package serve runs provider extensions' admission webhooks, as their
// gardener-extension-admission-<provider> binaries build them, in one HTTPS
// server of the simulator's: a controller-runtime manager on the garden
// whose client reads CloudProfiles, bindings and Secrets uncached (so that a
// binding created just before its shoot is seen), and whose webhook server
// answers AdmissionReview v1 at /webhooks/validate/<provider type> with the
// handler of that provider's own validator package, at the paths of further
// handlers (such as Gardener's admission controller's webhooks) with those,
// and /healthz with 200 once it serves.
package serve

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The garden reads' client-side rate limit: the webhook answers as fast as
// the garden does, as a landscape's replicas together do.
const (
	readQPS   = 500
	readBurst = 1000
)

// Provider is one provider extension's validation webhook.
type Provider struct {
	// Type is the shoot's spec.provider.type it validates.
	Type string
	// New builds the extension's webhook handler on the manager (its
	// validator.New, unwrapped to the admission webhook).
	New func(manager.Manager) (http.Handler, error)
}

// Handler is a webhook served at a path of its own.
type Handler struct {
	// Path is where it is served.
	Path string
	// New builds the handler on the manager.
	New func(manager.Manager) (http.Handler, error)
}

// Path is where the webhook of a provider type is served.
func Path(providerType string) string { return "/webhooks/validate/" + providerType }

// Main parses the flags, installs the schemes into the manager's scheme
// and serves the providers and handlers until the context ends.
func Main(ctx context.Context, schemes []func(*runtime.Scheme) error, providers []Provider, handlers ...Handler) error {
	// A flag set of its own: controller-runtime registers --kubeconfig on
	// the global one.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	var (
		kubeconfig = flags.String("kubeconfig", "", "kubeconfig of the garden (CloudProfiles, bindings, Secrets)")
		host       = flags.String("host", "127.0.0.1", "address to listen on")
		port       = flags.Int("port", 9443, "HTTPS port")
		certDir    = flags.String("cert-dir", "", "directory holding tls.crt and tls.key")
		verbose    = flags.Bool("v", false, "log every decision")
	)
	if err := flags.Parse(os.Args[1:]); err != nil {
		return fmt.Errorf("flags: %w", err)
	}
	log.SetLogger(zap.New(zap.UseDevMode(*verbose)))

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	// A kubeconfig carries no rate limit, and client-go's default of 5 reads
	// per second, at three reads per validation, queues a fleet's creations
	// until the garden's 10 s webhook timeout refuses them.
	cfg.QPS, cfg.Burst = readQPS, readBurst
	mgr, err := newManager(cfg, schemes, webhook.Options{Host: *host, Port: *port, CertDir: *certDir})
	if err != nil {
		return err
	}
	server := mgr.GetWebhookServer()
	sort.Slice(providers, func(i, j int) bool { return providers[i].Type < providers[j].Type })
	for _, p := range providers {
		h, err := p.New(mgr)
		if err != nil {
			return fmt.Errorf("webhook of %s: %w", p.Type, err)
		}
		server.Register(Path(p.Type), h)
	}
	for _, h := range handlers {
		handler, err := h.New(mgr)
		if err != nil {
			return fmt.Errorf("webhook at %s: %w", h.Path, err)
		}
		server.Register(h.Path, handler)
	}
	server.Register("/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

func newManager(cfg *rest.Config, schemes []func(*runtime.Scheme) error, opts webhook.Options) (manager.Manager, error) {
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, schemes...) {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("scheme: %w", err)
		}
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(opts),
		// Reads go to the garden: an informer would miss a binding or
		// Secret created just before the shoot that names it.
		NewClient: func(cfg *rest.Config, o client.Options) (client.Client, error) {
			return client.New(cfg, client.Options{Scheme: o.Scheme, Mapper: o.Mapper, HTTPClient: o.HTTPClient})
		},
	})
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	return mgr, nil
}
