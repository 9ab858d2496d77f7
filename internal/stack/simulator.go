package stack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// SimulatorName is the name of the simulator in Stop's reports.
const SimulatorName = "Gardener simulator (garden and shoot API servers)"

// StartSimulator starts the Gardener simulator in this process (gardensim.Start).
func (s *Stack) StartSimulator(ctx context.Context, opts ...gardensim.Option) (*gardensim.Simulator, error) {
	sim, err := gardensim.Start(ctx, opts...)
	if err != nil {
		return nil, err
	}
	s.Add(SimulatorName, sim.Stop)
	return sim, nil
}

// SimulatorProcessOptions say how to run the simulator as a process of the gardensim command.
type SimulatorProcessOptions struct {
	// Binary is the gardensim command (see Build).
	Binary string
	// Dir receives the log and the kubeconfigs.
	Dir string
	// Assets holds the kube-apiserver and etcd binaries (--assets).
	Assets string
	// Args are further flags, such as --scenario and --shoot-mode.
	Args []string
	// ReadyTimeout bounds the wait until the simulator serves. Zero is three minutes.
	ReadyTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before it kills. Zero is a minute.
	StopTimeout time.Duration
}

// SimulatorProcess is the simulator running as a process.
type SimulatorProcess struct {
	*subprocess.Process
	// AdminURL is the base URL of the admin API.
	AdminURL string
	// Kubeconfig is the file of the manager's kubeconfig: the front proxy, with its faults.
	Kubeconfig string
	// Config is what Kubeconfig holds.
	Config *rest.Config
	// GardenAdmin reaches the garden API server directly, past faults and the request log.
	GardenAdmin *rest.Config
}

// StartSimulatorProcess runs the gardensim command and returns once it serves.
// Its log is Dir/gardensim.log; it writes garden.kubeconfig and garden-admin.kubeconfig to Dir.
// It gets SIGTERM if this process dies, so that it stops its own etcd and API servers.
func (s *Stack) StartSimulatorProcess(ctx context.Context, o SimulatorProcessOptions) (*SimulatorProcess, error) {
	adminAddr, err := subprocess.LoopbackAddress(0)
	if err != nil {
		return nil, err
	}
	sp := &SimulatorProcess{
		AdminURL:   "http://" + adminAddr,
		Kubeconfig: filepath.Join(o.Dir, "garden.kubeconfig"),
	}
	gardenAdmin := filepath.Join(o.Dir, "garden-admin.kubeconfig")
	args := append([]string{
		"--assets", o.Assets,
		"--admin-listen", adminAddr,
		"--kubeconfig-out", sp.Kubeconfig,
		"--garden-admin-kubeconfig-out", gardenAdmin,
	}, o.Args...)
	sp.Process, err = subprocess.Start("gardensim",
		subprocess.Options{Log: filepath.Join(o.Dir, "gardensim.log"), DeathSignal: syscall.SIGTERM}, o.Binary, args...)
	if err != nil {
		return nil, err
	}
	stopTimeout := orDefault(o.StopTimeout, time.Minute)
	s.Add("Gardener simulator process", func() error { return sp.Stop(stopTimeout) })
	if err := sp.waitReady(ctx, orDefault(o.ReadyTimeout, 3*time.Minute), gardenAdmin); err != nil {
		return nil, fmt.Errorf("gardensim not ready: %w\n%s", err, sp.LogTail(30))
	}
	return sp, nil
}

// waitReady polls until the admin API answers and both kubeconfigs parse.
// The command writes them after its start-up, and not atomically.
// It gives up at once when the process exits.
func (sp *SimulatorProcess) waitReady(ctx context.Context, timeout time.Duration, gardenAdmin string) error {
	var last error
	exited := errors.New("exited")
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if sp.Exited() {
			return false, exited
		}
		if last = subprocess.HTTPOK(ctx, sp.AdminURL+"/healthz"); last != nil {
			return false, nil //nolint:nilerr // not up yet: the poll goes on.
		}
		if sp.Config, last = clientcmd.BuildConfigFromFlags("", sp.Kubeconfig); last != nil {
			return false, nil //nolint:nilerr // not written yet: the poll goes on.
		}
		sp.GardenAdmin, last = clientcmd.BuildConfigFromFlags("", gardenAdmin)
		return last == nil, nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exited):
		return fmt.Errorf("gardensim exited: %w", sp.Err())
	default:
		return fmt.Errorf("not within %s: %w", timeout, errors.Join(err, last))
	}
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
