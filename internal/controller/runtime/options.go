package runtime

import (
	"flag"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// Options are the Runtime controller's knobs. Each field is named after its flag; Polls,
// UnwatchedShoots and SeedListTTL have none. NewMachine turns the deadlines and polls into the
// steps'; Setup turns the rest into the controller's engine, watches and client cache.
type Options struct {
	// RuntimeRecheckInterval is how often a Ready Runtime is checked again from its start step
	// (fsm.WithResync); 0 is DefaultRuntimeRecheckInterval.
	RuntimeRecheckInterval time.Duration
	// ShootProgressRefresh is how long a Runtime may lag behind its shoot's progress reports; 0 is
	// DefaultShootProgressRefresh (see shootEvents).
	ShootProgressRefresh time.Duration
	// ShootCreateDeadline bounds how long a shoot may take to become ready.
	ShootCreateDeadline time.Duration
	// ShootDeleteDeadline bounds how long a shoot may take to disappear.
	ShootDeleteDeadline time.Duration
	// KubeconfigDeadline bounds how long the kubeconfig Secret may take to appear.
	KubeconfigDeadline time.Duration
	// PollInterval is the safety poll of waiting steps; watches usually wake them first. 0 is
	// DefaultPollInterval.
	PollInterval time.Duration
	// RuntimeClientCacheSize bounds the runtime-cluster clients Setup keeps between passes; 0 is
	// DefaultRuntimeClientCacheSize.
	RuntimeClientCacheSize int
	// Polls, when not nil, says how soon a waiting step looks again at what it waits for,
	// instead of PollInterval. It gets the step's name and the shoot as the step last read it.
	// The shoot is nil when the step reads none, or none is visible yet. It has no flag: a
	// program that embeds the manager sets it.
	Polls func(step string, shoot *gardencorev1beta1.Shoot) time.Duration
	// UnwatchedShoots leaves the shoots unwatched: Setup registers no shoot watch. A waiting
	// step then learns of its shoot's progress at its polls only. Without the watch there is
	// no need for a cache of shoots: Garden may read them from Gardener. It has no flag: a
	// program that embeds the manager sets it.
	UnwatchedShoots bool
	// SeedListTTL is how long a seed list that served a shoot creation serves the next ones of
	// its region; zero lists the seeds for every creation. It has no flag.
	SeedListTTL time.Duration
}

// DefaultPollInterval is the safety poll of waiting steps by default.
const DefaultPollInterval = 30 * time.Second

// DefaultRuntimeRecheckInterval is how often a Ready Runtime is checked again by default.
const DefaultRuntimeRecheckInterval = 30 * time.Minute

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		RuntimeRecheckInterval: DefaultRuntimeRecheckInterval,
		ShootProgressRefresh:   DefaultShootProgressRefresh,
		ShootCreateDeadline:    90 * time.Minute,
		ShootDeleteDeadline:    90 * time.Minute,
		KubeconfigDeadline:     15 * time.Minute,
		PollInterval:           DefaultPollInterval,
		RuntimeClientCacheSize: DefaultRuntimeClientCacheSize,
		SeedListTTL:            DefaultSeedListTTL,
	}
}

// BindFlags registers a flag for every knob that has one, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.DurationVar(&o.RuntimeRecheckInterval, "runtime-recheck-interval", o.RuntimeRecheckInterval, "how often a Ready Runtime is checked again from its start step (spread by ±10% per Runtime)")
	fs.DurationVar(&o.ShootProgressRefresh, "shoot-progress-refresh", o.ShootProgressRefresh, "how long status.shootLastOperation may lag behind the progress a shoot reports; "+
		"changes of the operation's state wake the Runtime at once")
	fs.DurationVar(&o.ShootCreateDeadline, "shoot-create-deadline", o.ShootCreateDeadline, "how long a shoot may take to be reconciled")
	fs.DurationVar(&o.ShootDeleteDeadline, "shoot-delete-deadline", o.ShootDeleteDeadline, "how long a shoot may take to be deleted")
	fs.DurationVar(&o.KubeconfigDeadline, "kubeconfig-deadline", o.KubeconfigDeadline, "how long the kubeconfig Secret may take to appear")
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "safety poll of waiting steps (watches usually wake them first)")
	fs.IntVar(&o.RuntimeClientCacheSize, "runtime-client-cache-size", o.RuntimeClientCacheSize, "clients of runtime clusters kept between passes, least recently used dropped first")
}

// Validate refuses a re-check interval or a progress refresh that is not positive. Ready
// Runtimes would then be checked again never or constantly.
func (o Options) Validate() error {
	if o.RuntimeRecheckInterval <= 0 {
		return fmt.Errorf("--runtime-recheck-interval %s must be positive", o.RuntimeRecheckInterval)
	}
	if o.ShootProgressRefresh <= 0 {
		return fmt.Errorf("--shoot-progress-refresh %s must be positive", o.ShootProgressRefresh)
	}
	return nil
}
