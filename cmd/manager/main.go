// Command manager runs Infrastructure Manager: the Runtime and GardenerCluster controllers.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// upstreamGardenKubeconfig is where upstream's Deployment mounts the Gardener kubeconfig.
const upstreamGardenKubeconfig = "/gardener/kubeconfig/kubeconfig"

func main() {
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
