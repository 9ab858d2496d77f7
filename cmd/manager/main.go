// Command manager runs Infrastructure Manager: the Runtime and GardenerCluster controllers.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// gcPercent is the collector's target (GOGC) unless the environment sets GOGC. Most of the
// manager's heap is its caches of Runtimes, GardenerClusters and shoots, which live as long as
// the process; Go's default of 100 lets the heap grow by as much again in garbage before a
// collection, which for a quiet fleet of 1,000 Runtimes was a third of the manager's memory.
// At 50 the collector runs twice as often, on a heap whose garbage is small: a few percent
// more CPU for a quarter less memory (docs/benchmarks).
const gcPercent = 50

// upstreamGardenKubeconfig is where upstream's Deployment mounts the Gardener kubeconfig.
const upstreamGardenKubeconfig = "/gardener/kubeconfig/kubeconfig"

func main() {
	setGCPercent(os.LookupEnv)
	opts := manager.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	gardenKubeconfig := flag.String("gardener-kubeconfig", upstreamGardenKubeconfig, "kubeconfig of the Gardener project")
	flag.StringVar(gardenKubeconfig, "gardener-kubeconfig-path", upstreamGardenKubeconfig, "upstream's name of --gardener-kubeconfig")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if err := run(*gardenKubeconfig, opts); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

func run(gardenKubeconfig string, opts manager.Options) error {
	if gardenKubeconfig == "" {
		return errors.New("--gardener-kubeconfig (or upstream's --gardener-kubeconfig-path) is required")
	}
	garden, err := clientcmd.BuildConfigFromFlags("", gardenKubeconfig)
	if err != nil {
		return fmt.Errorf("gardener kubeconfig: %w", err)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	mgr, err := manager.New(cfg, garden, opts)
	if err != nil {
		return err
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// setGCPercent sets gcPercent as the collector's target unless GOGC is set in the environment
// (looked up with lookup), which the Go runtime has applied already; it reports whether it set it.
func setGCPercent(lookup func(string) (string, bool)) bool {
	if _, set := lookup("GOGC"); set {
		return false
	}
	debug.SetGCPercent(gcPercent)
	return true
}
