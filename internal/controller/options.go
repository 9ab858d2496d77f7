package controller

import (
	"flag"
	"fmt"
	"time"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// EngineOptions are the knobs both controllers share: their workers and how their engines retry,
// probe, time out and poll. Each field is named after its flag; PollSpread has none.
type EngineOptions struct {
	// Workers is the number of concurrent reconciles per controller. The GardenerCluster
	// controller's GardenerClusterWorkers overrides it when set.
	Workers int
	// Retry is the retry policy of every step (--retry-*). Its fields are pkg/retry's, so
	// --retry-attempts sets Retry.MaxAttempts.
	Retry retry.Policy
	// FailedProbeInterval is how often a Failed object's step is tried again
	// (fsm.WithProbeInterval).
	FailedProbeInterval time.Duration
	// StepTimeout bounds one run of a step.
	StepTimeout time.Duration
	// StatusRequeueDelay is how soon the next step runs after a step moved on
	// (fsm.WithAdvanceDelay).
	StatusRequeueDelay time.Duration
	// PollSpread spreads each poll of a waiting step by up to ±this fraction of its interval.
	// Waiting objects then do not poll in lockstep. Zero polls at exactly the step's interval.
	// It has no flag: a program that embeds the manager sets it.
	PollSpread float64
}

// DefaultEngineOptions returns the production defaults.
func DefaultEngineOptions() EngineOptions {
	return EngineOptions{
		Workers:             25,
		Retry:               retry.DefaultPolicy(),
		FailedProbeInterval: time.Hour,
		StepTimeout:         2 * time.Minute,
		PollSpread:          fsm.DefaultPollSpread,
	}
}

// BindFlags registers a flag for every knob but PollSpread, with o's values as defaults.
func (o *EngineOptions) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent reconciles per controller")
	fs.DurationVar(&o.Retry.Initial, "retry-initial", o.Retry.Initial, "delay before the first retry of a failed step")
	fs.Float64Var(&o.Retry.Factor, "retry-factor", o.Retry.Factor, "growth of the retry delay per attempt")
	fs.DurationVar(&o.Retry.Cap, "retry-cap", o.Retry.Cap, "longest retry delay")
	fs.Func("retry-attempts", fmt.Sprintf("attempts before a step is exhausted and the object Failed (default %d)", o.Retry.MaxAttempts), func(v string) error {
		var n int32
		if _, err := fmt.Sscan(v, &n); err != nil {
			return fmt.Errorf("retry-attempts: %w", err)
		}
		o.Retry.MaxAttempts = n
		return nil
	})
	fs.DurationVar(&o.Retry.MaxDuration, "retry-max-duration", o.Retry.MaxDuration, "time since the first failure before a step is exhausted; 0 means none")
	fs.Float64Var(&o.Retry.Jitter, "retry-jitter", o.Retry.Jitter, "fraction of each delay that is random (1 full jitter, 0.5 equal jitter)")
	fs.DurationVar(&o.FailedProbeInterval, "failed-probe-interval", o.FailedProbeInterval, "how often a Failed object's step is tried again")
	fs.DurationVar(&o.StepTimeout, "step-timeout", o.StepTimeout, "longest run of one step; its calls are cancelled then")
	fs.DurationVar(&o.StatusRequeueDelay, "status-requeue-delay", o.StatusRequeueDelay, "how soon the next step runs after a step moved on; 0 means at once")
}

// Validate refuses a retry policy the engines cannot run.
func (o EngineOptions) Validate() error {
	if err := o.Retry.Validate(); err != nil {
		return fmt.Errorf("retry policy: %w", err)
	}
	return nil
}

// FSMOptions are the engine options of the knobs: both controllers' Setup pass them to their
// engine. Retry is the machines' default policy instead, and Workers the controllers'
// concurrency.
func (o EngineOptions) FSMOptions() []fsm.Option {
	return []fsm.Option{
		fsm.WithProbeInterval(o.FailedProbeInterval),
		fsm.WithAdvanceDelay(o.StatusRequeueDelay),
		fsm.WithStepTimeout(o.StepTimeout),
		fsm.WithPollSpread(o.PollSpread),
	}
}
