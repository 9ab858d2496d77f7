package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
)

// Run is the gardensim command: it parses args, starts the simulator, and
// runs until ctx ends; then it stops every process it started. Asking for
// --help prints the help and returns nil.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parse(args, stdout)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	sc, err := s.loadScenario()
	if err != nil {
		return err
	}
	log := funcr.New(func(prefix, args string) {
		fmt.Fprintln(stderr, time.Now().Format(time.TimeOnly), prefix, args)
	}, funcr.Options{Verbosity: s.verbosity})
	ctrl.SetLogger(log)
	opts := append(s.options(sc), gardensim.WithLogger(log))
	if s.processOutput {
		opts = append(opts, gardensim.WithProcessOutput(stderr))
	}
	sim, err := gardensim.Start(ctx, opts...)
	if err != nil {
		return fmt.Errorf("start simulator: %w", err)
	}
	err = serve(ctx, sim, s, stdout, log)
	log.Info("Stopping Gardener simulator")
	if stopErr := sim.Stop(); stopErr != nil {
		return fmt.Errorf("stop simulator: %w", stopErr)
	}
	log.Info("Gardener simulator stopped")
	return err
}

// serve publishes how to reach the simulator and waits for ctx to end.
func serve(ctx context.Context, sim *gardensim.Simulator, s settings, stdout io.Writer, log logr.Logger) error {
	if s.kubeconfigOut != "" {
		kubeconfig, err := sim.Kubeconfig()
		if err != nil {
			return err
		}
		if err := os.WriteFile(s.kubeconfigOut, kubeconfig, 0o600); err != nil {
			return fmt.Errorf("write garden kubeconfig: %w", err)
		}
		defer func() { _ = os.Remove(s.kubeconfigOut) }()
	}
	if s.adminKubeconfig != "" {
		kubeconfig, err := sim.GardenAdminKubeconfig()
		if err != nil {
			return err
		}
		if err := os.WriteFile(s.adminKubeconfig, kubeconfig, 0o600); err != nil {
			return fmt.Errorf("write garden admin kubeconfig: %w", err)
		}
		defer func() { _ = os.Remove(s.adminKubeconfig) }()
	}
	fmt.Fprintf(stdout, "Gardener API:  %s\nAdmin API:     %s\nKubeconfig:    %s\nScenario:      %s\n",
		sim.RESTConfig().Host, sim.AdminURL(), orNone(s.kubeconfigOut), orNone(s.scenario))
	log.Info("Ready; interrupt to stop")
	<-ctx.Done()
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
