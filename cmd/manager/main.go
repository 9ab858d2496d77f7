// Command manager runs Infrastructure Manager: the Runtime and GardenerCluster controllers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/lazylog"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// upstreamGardenKubeconfig is where upstream's Deployment mounts the Gardener kubeconfig.
const upstreamGardenKubeconfig = "/gardener/kubeconfig/kubeconfig"

// shutdownMargin is how much longer than --graceful-shutdown-timeout the process waits for the
// manager to stop after a signal before it exits anyway: controller-runtime's manager does not
// return while its caches wait for an API server they cannot reach.
const shutdownMargin = 5 * time.Second

func main() {
	opts := manager.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	gardenKubeconfig := flag.String("gardener-kubeconfig", upstreamGardenKubeconfig, "kubeconfig of the Gardener project")
	flag.StringVar(gardenKubeconfig, "gardener-kubeconfig-path", upstreamGardenKubeconfig, "upstream's name of --gardener-kubeconfig")
	memLimit := flag.String("memory-limit", "", "memory the process must stay within, a quantity such as 150Mi; the collector keeps the heap 56Mi below it, for the executable's pages (default: GOMEMLIMIT if set, else the container's limit; 0: none)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	// Loggers made per reconcile and per step hold their pairs until they log a line: a quiet
	// re-check logs none.
	log := lazylog.Wrap(zap.New(zap.UseFlagOptions(&zapOpts)))
	ctrl.SetLogger(log)
	// client-go logs through klog why it cannot reach an API server (its reflectors' list and
	// watch errors, leader election): those lines go where the manager's own go.
	klog.SetLogger(log)
	self, _ := os.ReadFile("/proc/self/cgroup") // without it, the root's limit
	limit, err := resolveMemoryLimit(*memLimit, os.LookupEnv, "/sys/fs/cgroup", string(self))
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	}
	limit.apply()
	log.Info("memory limit", "process", limit.process, "heap", limit.heap, "from", limit.source)
	if err := run(ctrl.SetupSignalHandler(), *gardenKubeconfig, opts); err != nil {
		ctrl.Log.Error(err, "manager stopped")
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, gardenKubeconfig string, opts manager.Options) error {
	garden, err := loadGardenKubeconfig(gardenKubeconfig)
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	mgr, err := manager.New(cfg, garden, opts)
	if err != nil {
		return err
	}
	probe, err := versionProbe(cfg, reachabilityInterval/2)
	if err != nil {
		return err
	}
	ctrl.Log.Info("starting", "apiServer", cfg.Host, "gardener", garden.Host, "namespace", opts.Namespace)
	go watchReachability(ctx, ctrl.Log, cfg.Host, probe, reachabilityInterval)
	return startUntilStopped(ctx, mgr, opts.GracefulShutdownTimeout+shutdownMargin)
}

// loadGardenKubeconfig reads the Gardener project's kubeconfig from path, with its inline
// credentials and CA data only (package internal/kubeconfig).
func loadGardenKubeconfig(path string) (*rest.Config, error) {
	if path == "" {
		return nil, errors.New("--gardener-kubeconfig (or upstream's --gardener-kubeconfig-path) is required")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gardener kubeconfig: %w", err)
	}
	garden, err := kubeconfig.RESTConfig("file "+path, data)
	if err != nil {
		return nil, fmt.Errorf("gardener kubeconfig: %w", err)
	}
	return garden, nil
}

// starter is the part of a controller-runtime manager that startUntilStopped runs.
type starter interface {
	Start(ctx context.Context) error
}

// startUntilStopped runs m until ctx ends, and returns once m has stopped or, when it does not
// stop, grace after ctx ended, with an error that says so.
func startUntilStopped(ctx context.Context, m starter, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	select {
	case err := <-done:
		return wrapStart(err)
	case <-ctx.Done():
	}
	ctrl.Log.Info("stopping", "grace", grace.String())
	select {
	case err := <-done:
		return wrapStart(err)
	case <-time.After(grace):
		return fmt.Errorf("the manager did not stop within %s of the signal", grace)
	}
}

// wrapStart adds context to the manager's error.
func wrapStart(err error) error {
	if err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}
