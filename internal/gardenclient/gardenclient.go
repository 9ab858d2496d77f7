package gardenclient

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Connection is the connection to the Gardener project.
type Connection struct {
	// Cluster holds the client and the cache. The manager runs it.
	Cluster cluster.Cluster
	// Breaker is the circuit breaker of every call, the engines' gate.
	Breaker *Breaker
	// Prober probes an open circuit once its cooldown has passed. The manager runs it.
	Prober manager.Runnable
}

// New connects to the Gardener project through garden. Every call of the connection goes
// through one rate limiter, a timeout, the request counter and one circuit breaker. The cache
// watches the project's namespace and keeps only what the steps read (Transform).
func New(garden *rest.Config, o Options) (*Connection, error) {
	cfg := rest.CopyConfig(garden)
	WithRequestTimeout(cfg, o.GardenerRequestTimeout)
	Instrument(cfg, o.Requests)
	breaker := NewBreaker(BreakerConfig{
		Threshold: o.GardenerCircuitThreshold, Cooldown: o.GardenerCircuitCooldown, ReleaseWindow: o.GardenerReleaseWindow,
		Gauge: o.Circuit,
	})
	breaker.Wrap(cfg)
	if o.Guard != nil {
		cfg.Wrap(o.Guard)
	}
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(float32(o.GardenerQPS), o.GardenerBurst)
	c, err := cluster.New(cfg, func(co *cluster.Options) {
		co.Scheme = o.Scheme
		co.MapperProvider = RESTMapper
		co.Cache = cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
			// A shoot's managedFields are often as large as its spec, and no step reads them,
			// nor most of its status (Transform).
			DefaultTransform: Transform,
		}
		co.Client = o.clientOptions()
	})
	if err != nil {
		return nil, fmt.Errorf("garden cluster: %w", err)
	}
	prober, err := newProber(cfg, breaker, o.GardenerCircuitCooldown)
	if err != nil {
		return nil, err
	}
	return &Connection{Cluster: c, Breaker: breaker, Prober: prober}, nil
}

// clientOptions configure the client's reads. Seeds are read once per shoot creation: no
// informer. Shoots and the structured-auth ConfigMaps come from the watched cache. Every
// re-check reads its runtime's ConfigMap, which would otherwise be a request to Gardener.
func (o Options) clientOptions() client.Options {
	uncached := slices.Concat([]client.Object{&gardencorev1beta1.Seed{}}, o.Uncached)
	return client.Options{Cache: &client.CacheOptions{DisableFor: uncached}}
}

// newProber returns the runnable that probes an open circuit. The probe reads the Gardener
// API's version: the cheapest call, through the same breaker.
func newProber(cfg *rest.Config, breaker *Breaker, cooldown time.Duration) (manager.Runnable, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("garden discovery client: %w", err)
	}
	probe := func(context.Context) error {
		_, err := disco.ServerVersion()
		return err //nolint:wrapcheck // the breaker records the reply; nobody reads this error.
	}
	interval := max(cooldown/4, 100*time.Millisecond)
	return manager.RunnableFunc(breaker.Prober(interval, probe)), nil
}

// RESTMapper maps the kinds the manager uses in the Gardener project without asking Gardener,
// and anything else through discovery. With discovery alone, one failed discovery request at
// start delays the shoot watch, and with it every Runtime, by 10 seconds or more.
func RESTMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	static := meta.NewDefaultRESTMapper([]schema.GroupVersion{gardencorev1beta1.SchemeGroupVersion, corev1.SchemeGroupVersion})
	static.Add(gardencorev1beta1.SchemeGroupVersion.WithKind("Shoot"), meta.RESTScopeNamespace)
	static.Add(gardencorev1beta1.SchemeGroupVersion.WithKind("Seed"), meta.RESTScopeRoot)
	static.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	static.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	dynamic, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("garden REST mapper: %w", err)
	}
	return meta.FirstHitRESTMapper{MultiRESTMapper: meta.MultiRESTMapper{static, dynamic}}, nil
}
