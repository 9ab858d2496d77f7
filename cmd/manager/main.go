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

func main() {
	opts := manager.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	gardenKubeconfig := flag.String("gardener-kubeconfig", "", "kubeconfig of the Gardener project (required)")
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
		return errors.New("--gardener-kubeconfig is required")
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
