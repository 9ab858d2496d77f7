package gardenclient

import (
	"flag"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure the connection to the Gardener project: its Limits, which the command line
// sets, and what the manager wires in.
type Options struct {
	// Limits are the rate limit, the request timeout and the circuit breaker of every call.
	Limits
	// Namespace is the project's namespace, garden-<project>. The cache holds it alone.
	Namespace string
	// Scheme holds the types read and written through the connection.
	Scheme *runtime.Scheme
	// Requests counts the requests that reach Gardener (the metrics package's GardenerRequests).
	Requests *prometheus.CounterVec
	// Circuit reports the breaker's state (the metrics package's GardenerCircuit). Nil reports
	// it nowhere.
	Circuit prometheus.Gauge
	// Guard, when not nil, wraps the transport under everything else: a shadow's guard. A
	// request it refuses reaches neither the breaker nor the request counter.
	Guard func(http.RoundTripper) http.RoundTripper
	// Uncached are kinds the client reads from the API server, besides Seeds.
	Uncached []client.Object
}

// Limits are the knobs of the connection that the command line sets: what every call to
// Gardener runs under. Each field is named after its flag.
type Limits struct {
	// GardenerQPS and GardenerBurst are the client-side rate limit. Every call through the
	// connection shares it.
	GardenerQPS   float64
	GardenerBurst int
	// GardenerRequestTimeout bounds each request but watches. Zero means none.
	GardenerRequestTimeout time.Duration
	// GardenerCircuitThreshold consecutive failures open the circuit breaker for
	// GardenerCircuitCooldown. Zero disables the breaker.
	GardenerCircuitThreshold int
	GardenerCircuitCooldown  time.Duration
	// GardenerReleaseWindow spreads the release of the runtimes an open circuit paused once it
	// closes.
	GardenerReleaseWindow time.Duration
}

// DefaultLimits returns the production defaults; the request timeout is upstream's.
func DefaultLimits() Limits {
	return Limits{
		GardenerQPS:              20,
		GardenerBurst:            40,
		GardenerRequestTimeout:   3 * time.Second,
		GardenerCircuitThreshold: 20,
		GardenerCircuitCooldown:  30 * time.Second,
		GardenerReleaseWindow:    30 * time.Second,
	}
}

// BindFlags registers a flag for every limit, with l's values as defaults.
func (l *Limits) BindFlags(fs *flag.FlagSet) {
	fs.Float64Var(&l.GardenerQPS, "gardener-qps", l.GardenerQPS, "client-side rate limit of all Gardener calls, per second")
	fs.IntVar(&l.GardenerBurst, "gardener-burst", l.GardenerBurst, "burst of the Gardener rate limit")
	fs.DurationVar(&l.GardenerRequestTimeout, "gardener-request-timeout", l.GardenerRequestTimeout, "timeout of each Gardener request (watches excepted); 0 means none")
	fs.IntVar(&l.GardenerCircuitThreshold, "gardener-circuit-threshold", l.GardenerCircuitThreshold, "consecutive Gardener failures (5xx, no reply) that open the circuit breaker")
	fs.DurationVar(&l.GardenerCircuitCooldown, "gardener-circuit-cooldown", l.GardenerCircuitCooldown, "how long an open circuit refuses Gardener calls before one probe")
	fs.DurationVar(&l.GardenerReleaseWindow, "gardener-release-window", l.GardenerReleaseWindow, "window over which runtimes paused by an open circuit are released once it closes")
}
