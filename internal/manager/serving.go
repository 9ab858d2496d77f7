package manager

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
)

// metricsServer serves the metrics on MetricsBindAddress. Secure, it serves HTTPS with a self-signed
// certificate and answers only callers whose token the API server accepts (TokenReview) and who
// may get the path /metrics (SubjectAccessReview): the metrics-reader ClusterRole of
// config/rbac grants that. The writes rec keeps are served beside them, at shadow.HandlerPath,
// under the same rule for that path.
func (o Options) metricsServer(rec *shadow.Recorder) metricsserver.Options {
	s := metricsserver.Options{BindAddress: o.MetricsBindAddress}
	if o.MetricsSecure {
		s.SecureServing, s.FilterProvider = true, filters.WithAuthenticationAndAuthorization
	}
	if rec != nil {
		s.ExtraHandlers = map[string]http.Handler{shadow.HandlerPath: rec}
	}
	return s
}

// syncWait bounds how long one readiness probe waits for the caches.
const syncWait = time.Second

// CacheSynced is the readiness check: ready once the cache has started and every informer it
// runs has synced, so a replica is not reported ready while it would act on an empty cache. It
// waits at most a second per probe.
//
// The shoot cache of the Gardener project is left out on purpose: during a Gardener outage the
// circuit breaker is in charge, and a replica that is not ready is not scraped, so the outage
// would hide its own alert.
//
// Liveness is healthz.Ping, the process answering on its probe port: it depends on neither the
// API server nor Gardener, since a restart mends neither and would hand the lease over in the
// middle of an outage.
func CacheSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), syncWait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("caches not synced")
		}
		return nil
	}
}
