// Command baseline is the baseline of the benchmarks in test/bench: this repository's manager
// with the settings under which upstream Kyma Infrastructure Manager requeues. It is no product:
// it is built and run by the benchmark only.
//
// It takes the manager's flags, then overrides some of them with upstream's settings:
//
//   - Gardener is called at 5 QPS with a burst of 5, and the circuit breaker never opens.
//   - Every step of both controllers retries after a fixed 15s, with no jitter and no limit of
//     attempts or time. Upstream leaves errors other than Gardener's to controller-runtime's
//     per-item exponential backoff. The engine cannot tell a Gardener error from another, so
//     here every error gets the 15s.
//   - The waiting steps poll at upstream's intervals, exactly: 60s while a shoot is created,
//     30s while it reconciles, 90s while it is deleted.
//   - Shoots are neither watched nor cached: each poll is a request to Gardener.
//   - Retry times live in memory only, as in upstream's work queue. The manager persists them,
//     so at its start the baseline sets every pending retry time to now, before its manager
//     runs (forgetRetryTimes). After a restart every retrying object then runs at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Upstream's client-side rate limit of Gardener calls.
const (
	upstreamGardenerQPS   = 5
	upstreamGardenerBurst = 5
)

// upstreamPolicy is upstream's requeue after an error: 15s every time, without jitter, and never
// exhausted.
var upstreamPolicy = retry.Policy{Initial: 15 * time.Second, Factor: 1, Cap: 15 * time.Second, MaxAttempts: math.MaxInt32}

// The polls of upstream's waiting steps.
const (
	// pollShootCreate is the poll while Gardener creates the shoot, or has not started.
	pollShootCreate = 60 * time.Second
	// pollShootReconcile is the poll while Gardener reconciles the shoot.
	pollShootReconcile = 30 * time.Second
	// pollShootDelete is the poll while Gardener deletes the shoot.
	pollShootDelete = 90 * time.Second
)

func main() {
	opts := manager.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	gardenKubeconfig := flag.String("gardener-kubeconfig", "", "kubeconfig of the Gardener project")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if err := run(ctrl.SetupSignalHandler(), *gardenKubeconfig, upstream(opts)); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

// upstream returns o with upstream's rate limit, retries and polls, no circuit breaker and no
// shoot watch, whatever o said of them.
func upstream(o manager.Options) manager.Options {
	o.GardenerQPS, o.GardenerBurst = upstreamGardenerQPS, upstreamGardenerBurst
	o.GardenerCircuitThreshold = 0
	o.Retry = upstreamPolicy
	o.PollSpread = 0
	o.Polls = upstreamPolls(o.PollInterval)
	o.UnwatchedShoots = true
	return o
}

// upstreamPolls returns the polls of upstream's waiting steps. WaitForShoot polls by the shoot's
// last operation: pollShootReconcile while it is a Reconcile, else pollShootCreate (a Create,
// none yet, or no shoot visible yet). WaitForShootDeletion polls at pollShootDelete. Other
// steps poll at poll.
func upstreamPolls(poll time.Duration) func(string, *gardencorev1beta1.Shoot) time.Duration {
	return func(step string, shoot *gardencorev1beta1.Shoot) time.Duration {
		switch step {
		case runtimectrl.StepWaitForShoot:
			if shoot != nil && shoot.Status.LastOperation != nil && shoot.Status.LastOperation.Type == gardencorev1beta1.LastOperationTypeReconcile {
				return pollShootReconcile
			}
			return pollShootCreate
		case runtimectrl.StepWaitForShootDeletion:
			return pollShootDelete
		}
		return poll
	}
}

func run(ctx context.Context, gardenKubeconfig string, opts manager.Options) error {
	if gardenKubeconfig == "" {
		return errors.New("--gardener-kubeconfig is required")
	}
	data, err := os.ReadFile(gardenKubeconfig)
	if err != nil {
		return fmt.Errorf("gardener kubeconfig: %w", err)
	}
	garden, err := kubeconfig.RESTConfig("file "+gardenKubeconfig, data)
	if err != nil {
		return fmt.Errorf("gardener kubeconfig: %w", err)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if err := forgetRetryTimesIn(ctx, cfg, opts.Namespace); err != nil {
		return err
	}
	mgr, err := manager.New(cfg, garden, opts)
	if err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// forgetRetryTimesIn runs forgetRetryTimes over namespace with a client of its own.
func forgetRetryTimesIn(ctx context.Context, cfg *rest.Config, namespace string) error {
	scheme, err := manager.NewScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	n, err := forgetRetryTimes(ctx, c, namespace, time.Now())
	if err != nil {
		return err
	}
	ctrl.Log.Info("forgot the persisted retry times", "objects", n)
	return nil
}

// forgetParallel is how many patches forgetRetryTimes sends at once.
const forgetParallel = 16

// engineObject is an object whose status holds the engine's retry record.
type engineObject interface {
	client.Object
	EngineStatus() *infrav1.EngineStatus
}

// forgetRetryTimes sets each retry time after now, of the Runtimes and GardenerClusters in
// namespace, to now, and returns how many it set. An engine then finds those retries due at
// once. The attempt count and the rest of the record stay. It runs before the manager starts:
// every retry time it finds was scheduled by an earlier process.
func forgetRetryTimes(ctx context.Context, c client.Client, namespace string, now time.Time) (int, error) {
	var runtimes infrav1.RuntimeList
	if err := c.List(ctx, &runtimes, client.InNamespace(namespace)); err != nil {
		return 0, fmt.Errorf("list Runtimes: %w", err)
	}
	var clusters infrav1.GardenerClusterList
	if err := c.List(ctx, &clusters, client.InNamespace(namespace)); err != nil {
		return 0, fmt.Errorf("list GardenerClusters: %w", err)
	}
	objs := make([]engineObject, 0, len(runtimes.Items)+len(clusters.Items))
	for i := range runtimes.Items {
		objs = append(objs, &runtimes.Items[i])
	}
	for i := range clusters.Items {
		objs = append(objs, &clusters.Items[i])
	}
	// The status keeps whole seconds; now, truncated, is never later than now.
	due := metav1.NewTime(now.Truncate(time.Second))
	var n atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	// A few patches at once keep the start short with many objects in backoff.
	g.SetLimit(forgetParallel)
	for _, obj := range objs {
		r := obj.EngineStatus().Retry
		if r == nil || r.NextRetryAt == nil || !r.NextRetryAt.After(now) {
			continue
		}
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		r.NextRetryAt = &due
		g.Go(func() error {
			if err := c.Status().Patch(ctx, obj, patch); err != nil {
				return fmt.Errorf("forget the retry time of %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
			}
			n.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return int(n.Load()), err
}
