package garden

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// SchedulerBinaryName is gardener-scheduler's file name in bin/gardener.
const SchedulerBinaryName = "gardener-scheduler"

// DefaultSchedulerBinary is gardener-scheduler beside gardener-apiserver.
func DefaultSchedulerBinary(apiserver string) string {
	return filepath.Join(filepath.Dir(apiserver), SchedulerBinaryName)
}

// SchedulerStrategy is the scheduler's candidate determination strategy: a landscape whose
// regions have no seed of their own gets its shoots onto the nearest seed of the provider.
const SchedulerStrategy = "MinimalDistance"

// schedulerConfig is gardener-scheduler's SchedulerConfiguration: the garden's administrator,
// no leader election (it runs once), probes and metrics on loopback, the shoot scheduler with
// SchedulerStrategy.
const schedulerConfig = `apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 100
  burst: 130
leaderElection:
  leaderElect: false
logLevel: info
logFormat: text
server:
  healthProbes:
    bindAddress: 127.0.0.1
    port: %s
  metrics:
    bindAddress: 127.0.0.1
    port: %s
schedulers:
  shoot:
    concurrentSyncs: 5
    candidateDeterminationStrategy: %s
`

// StartScheduler runs gardener-scheduler (binary) against the garden: it binds every new shoot
// to a seed through shoots/binding, and reports a shoot no seed fits with a SchedulingFailed
// event and lastOperation Create/Pending, as on a landscape. It returns once the scheduler is
// ready (its informers synced); Stop ends it before the garden.
func (g *Garden) StartScheduler(ctx context.Context, binary string, output io.Writer, timeout time.Duration) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("%s is missing (run 'make gardener-binaries'): %w", binary, err)
	}
	kubeconfig := filepath.Join(g.dir, "scheduler-kubeconfig.yaml")
	if err := writeKubeconfig(kubeconfig, g.Config); err != nil {
		return err
	}
	probes, err := subprocess.LoopbackAddress(0)
	if err != nil {
		return err
	}
	metrics, err := subprocess.LoopbackAddress(0)
	if err != nil {
		return err
	}
	_, probePort, _ := net.SplitHostPort(probes)
	_, metricsPort, _ := net.SplitHostPort(metrics)
	config := filepath.Join(g.dir, "scheduler-config.yaml")
	data := fmt.Sprintf(schedulerConfig, kubeconfig, probePort, metricsPort, SchedulerStrategy)
	if err := os.WriteFile(config, []byte(data), 0o600); err != nil {
		return fmt.Errorf("write gardener-scheduler configuration: %w", err)
	}
	if g.Scheduler, err = subprocess.Start(SchedulerBinaryName, subprocess.Options{Output: output}, binary, "--config="+config); err != nil {
		return err
	}
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	return g.Scheduler.WaitHTTP(ctx, "http://"+probes+"/readyz", timeout)
}
