package e2e_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

const (
	// project is the Gardener project; shoots live in garden-kyma.
	project = "kyma"
	// namespace holds the Runtimes, as the upstream fixtures say.
	namespace = "kcp-system"
	// attempts is the attempt limit of every step.
	attempts = 3
	// job is the scrape job the shipped rules read (up{job="infrastructure-manager"}).
	job = "infrastructure-manager"

	// circuitThreshold and circuitCooldown configure the manager's Gardener circuit breaker, as
	// --gardener-circuit-threshold and --gardener-circuit-cooldown do: three consecutive 5xx
	// replies (or calls without a reply) open it, and an open circuit lets one probe through every
	// five seconds. Production opens after 20 failures. In the outage scenario one runtime calls
	// Gardener, one call per attempt, so the circuit must open within its attempts. No other
	// scenario makes three calls in a row fail with a 5xx.
	circuitThreshold = 3
	circuitCooldown  = 5 * time.Second

	// resendDelay is how often Prometheus re-sends a firing alert (default 1m). Prometheus
	// evaluates its rules before it has discovered the Alertmanager and drops what it cannot
	// send, so with the default the first Watchdog and anything else firing at start-up would
	// reach Alertmanager only a minute later. First notifications and resolves are sent at once
	// either way; alerts are valid for four resend delays, so 5s keeps a slow evaluation from
	// resolving them by expiry.
	resendDelay = 5 * time.Second
)

// The shipped configuration, relative to the repository root.
var (
	shippedRules        = filepath.Join("config", "prometheus", "rules.yaml")
	shippedAlertmanager = filepath.Join("config", "alertmanager", "alertmanager.yaml")
)

// The Alertmanager receivers of the shipped routing and the paths of their test webhooks.
const (
	onCall  = "on-call"
	devTeam = "dev-team"
	deadman = "deadman"
)

// suite is everything TestMain starts once for all tests.
type suite struct {
	// dir holds the configurations, the data of Prometheus and Alertmanager, and every log.
	dir string
	// parts stops what started, in reverse order.
	parts stack.Stack

	env *controlplane.ControlPlane
	sim *gardensim.Simulator
	// simLog and simProcessLog receive the simulator's own log and the output of the API servers
	// it runs for the shoots.
	simLog, simProcessLog *os.File

	// metricsAddr is where the manager serves /metrics and Prometheus scrapes it.
	metricsAddr string
	// metrics are the managers', on controller-runtime's registry, which /metrics serves. The
	// registry takes each metric once, so every manager of the suite takes these.
	metrics *metrics.Metrics
	manager *stack.Manager

	// promBin and amBin are the Prometheus and Alertmanager binaries (see monitoringBinaries).
	promBin, amBin  string
	mon             *stack.Monitoring
	promURL, amURL  string
	receivers       map[string]*receiver
	oncall, devteam *receiver

	logFile *os.File
	// phases are the start-up times, for the log.
	phases []string
}

// sys is the running suite.
var sys *suite

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped with -short: it starts Prometheus, Alertmanager and several API servers")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer controlplane.StopOnSignal()()
	promBin, amBin, err := monitoringBinaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	began := time.Now()
	s := &suite{promBin: promBin, amBin: amBin}
	err = s.start(context.Background())
	stopped := func() {
		if err := s.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stop:", err)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start:", err)
		stopped()
		fmt.Fprintln(os.Stderr, "e2e: logs and configurations kept in", s.dir)
		return 1
	}
	fmt.Printf("e2e: stack ready in %s (%s); Prometheus %s (%s), Alertmanager %s (%s), manager metrics %s, work dir %s\n",
		time.Since(began).Round(100*time.Millisecond), strings.Join(s.phases, ", "), s.promURL, s.promBin, s.amURL, s.amBin, s.metricsAddr, s.dir)
	sys = s
	code := m.Run()
	stopped()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "e2e: logs and configurations kept in", s.dir)
	} else if err := os.RemoveAll(s.dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	}
	return code
}

// monitoringBinaries returns the Prometheus and Alertmanager binaries the end-to-end tests run,
// found as `make run` finds them (stack.FindMonitoringIn): the file that PROMETHEUS or
// ALERTMANAGER names (make test-go sets them), else the build of 'make monitoring-tools' in the
// repository's bin/monitoring, else the one on PATH (the Debian packages'). A variable that names
// no file is an error here rather than a reason to take another binary. Every test of the
// package that needs Prometheus or Alertmanager gets them from here.
func monitoringBinaries() (prometheus, alertmanager string, err error) {
	var errs []error
	for _, env := range []string{"PROMETHEUS", "ALERTMANAGER"} {
		if p := os.Getenv(env); p != "" {
			if _, err := os.Stat(p); err != nil {
				errs = append(errs, fmt.Errorf("%s=%s: %w", env, p, err))
			}
		}
	}
	prometheus, alertmanager = stack.FindMonitoringIn(testenv.RepoRoot())
	for name, p := range map[string]string{"prometheus": prometheus, "alertmanager": alertmanager} {
		if p == "" {
			errs = append(errs, fmt.Errorf("no %s in $%s, %s or on PATH: build it with 'make monitoring-tools' (make test-go and make test do)",
				name, strings.ToUpper(name), filepath.Join(testenv.RepoRoot(), stack.MonitoringDir)))
		}
	}
	return prometheus, alertmanager, errors.Join(errs...)
}

// start boots the suite's parts in order: the webhooks, the control plane, the simulator, the
// manager, then Alertmanager and Prometheus (last, so that it never sees the manager absent). It
// returns once the Watchdog has travelled the whole chain to the deadman webhook. On error, stop
// ends what was started.
func (s *suite) start(ctx context.Context) error {
	var err error
	if s.dir, err = os.MkdirTemp("", "infrastructure-manager-e2e-"); err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	if s.logFile, err = s.parts.CreateFile(filepath.Join(s.dir, "manager.log")); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(s.logFile), zap.UseDevMode(true)))

	s.receivers = map[string]*receiver{}
	for _, name := range []string{onCall, devTeam, deadman} {
		s.receivers[name] = newReceiver(name, webhookPath(name))
	}
	s.oncall, s.devteam = s.receivers[onCall], s.receivers[devTeam]
	for _, phase := range []struct {
		name  string
		start func(context.Context) error
	}{
		{"control plane", s.startControlPlane},
		{"simulator", s.startSimulator},
		{"manager", s.startManager},
		{"monitoring", s.startMonitoring},
		{"watchdog", s.waitForPipeline},
	} {
		began := time.Now()
		if err := phase.start(ctx); err != nil {
			return err
		}
		s.phases = append(s.phases, fmt.Sprintf("%s %s", phase.name, time.Since(began).Round(100*time.Millisecond)))
	}
	return nil
}

// startControlPlane boots kube-apiserver and etcd with the CRDs and the namespace of the Runtimes.
func (s *suite) startControlPlane(ctx context.Context) error {
	scheme, err := testenv.Scheme()
	if err != nil {
		return err
	}
	s.env, err = s.parts.StartControlPlane(ctx, stack.ControlPlaneOptions{
		Root: testenv.RepoRoot(), Assets: testenv.Assets(), Scheme: scheme, Namespace: namespace,
	})
	return err
}

// startSimulator boots the Gardener simulator with the project and two-second shoot operations.
// Its log goes to gardensim.log and the output of its shoot API servers to
// gardensim-processes.log in the work dir.
func (s *suite) startSimulator(ctx context.Context) error {
	var err error
	if s.simLog, err = s.parts.CreateFile(filepath.Join(s.dir, "gardensim.log")); err != nil {
		return err
	}
	if s.simProcessLog, err = s.parts.CreateFile(filepath.Join(s.dir, "gardensim-processes.log")); err != nil {
		return err
	}
	s.sim, err = s.parts.StartSimulator(ctx, gardensim.WithAssets(testenv.Assets()), gardensim.WithProjects(project), gardensim.WithOperationDuration(2*time.Second),
		gardensim.WithLogger(zap.New(zap.WriteTo(s.simLog), zap.UseDevMode(true))),
		gardensim.WithProcessOutput(s.simProcessLog))
	return err
}

// webhookPath is the path of a receiver's webhook, as in the shipped configuration (/oncall, ...).
func webhookPath(receiver string) string { return strings.ReplaceAll(receiver, "-", "") }

// startManager runs the manager with the wiring of cmd/manager, short retry policies and
// deadlines, a circuit breaker that opens after circuitThreshold failures, and metrics on a free
// loopback port. It returns once the metrics endpoint answers.
func (s *suite) startManager(ctx context.Context) error {
	var err error
	if s.metricsAddr, err = subprocess.LoopbackAddress(0); err != nil {
		return err
	}
	if s.metrics == nil {
		if s.metrics, err = metrics.New(ctrlmetrics.Registry); err != nil {
			return err
		}
	}
	s.manager, err = s.parts.StartManager(ctx, stack.ManagerOptions{
		Config: s.env.Config, Garden: s.sim.RESTConfig(), Options: managerOptions(s.metricsAddr, s.metrics), WaitForMetrics: true,
	})
	return err
}

// testPolicy is the retry policy of every step in the suite: short delays and few attempts, so
// that a runtime is exhausted within seconds.
func testPolicy() retry.Policy {
	return retry.Policy{Initial: time.Second, Factor: 2, Cap: 2 * time.Second, MaxAttempts: attempts, Jitter: 0.5}
}

// managerOptions are the options of every manager the suite starts, serving metrics on
// metricsAddr. m are the suite's metrics.
func managerOptions(metricsAddr string, m *metrics.Metrics) manager.Options {
	o := manager.DefaultOptions()
	o.Metrics = m
	o.GardenerProject, o.MetricsBindAddress, o.HealthProbeBindAddress, o.Workers, o.SkipNameValidation = project, metricsAddr, "0", 4, true
	// The test's Prometheus scrapes plain HTTP (test/deploy checks the shipped HTTPS endpoint).
	o.MetricsSecure = false
	o.Retry = testPolicy()
	o.ShootCreateDeadline, o.ShootDeleteDeadline, o.KubeconfigDeadline, o.PollInterval = 2*time.Minute, time.Minute, time.Minute, 2*time.Second
	o.GardenerCircuitThreshold, o.GardenerCircuitCooldown = circuitThreshold, circuitCooldown
	return o
}

// stopManager stops the manager and waits until it has ended; its metrics endpoint goes with it.
// It is safe to call more than once.
func (s *suite) stopManager() error {
	if s.manager == nil {
		return nil
	}
	return s.manager.Stop()
}

// startMonitoring runs Alertmanager with the shipped routing, webhooks and timers adapted, then
// Prometheus with the scaled rules, scraping the manager every second and sending alerts to the
// Alertmanager. The receivers close when Prometheus and Alertmanager have stopped.
func (s *suite) startMonitoring(ctx context.Context) error {
	s.parts.AddQuiet("alert receivers", func() error {
		for _, r := range s.receivers {
			r.close()
		}
		return nil
	})
	shippedAM, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), shippedAlertmanager))
	if err != nil {
		return fmt.Errorf("read shipped alertmanager config: %w", err)
	}
	webhooks := map[string]string{}
	for name, r := range s.receivers {
		webhooks[name] = r.url(webhookPath(name))
	}
	amConfig, err := alertmanagerConfig(shippedAM, webhooks)
	if err != nil {
		return err
	}
	shippedRules, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), shippedRules))
	if err != nil {
		return fmt.Errorf("read shipped rules: %w", err)
	}
	rules, err := scaleRules(shippedRules)
	if err != nil {
		return err
	}
	rulesPath := filepath.Join(s.dir, "rules.yaml")
	if err := os.WriteFile(rulesPath, rules, 0o644); err != nil {
		return fmt.Errorf("write rules: %w", err)
	}
	s.mon, err = s.parts.StartMonitoring(ctx, stack.MonitoringOptions{
		Prometheus: s.promBin, Alertmanager: s.amBin,
		RulesFile: rulesPath, AlertmanagerConfig: amConfig,
		MetricsAddr: s.metricsAddr, Dir: s.dir,
		ScrapeInterval: time.Second, ScrapeTimeout: time.Second,
		PrometheusArgs: []string{"--rules.alert.resend-delay=" + resendDelay.String()},
		StopTimeout:    10 * time.Second,
	})
	if err != nil {
		return err
	}
	s.promURL, s.amURL = s.mon.PrometheusURL, s.mon.AlertmanagerURL
	return nil
}

// waitForPipeline returns once Prometheus scrapes the manager, has loaded every shipped alert,
// and the Watchdog has reached the deadman webhook through Alertmanager.
func (s *suite) waitForPipeline(ctx context.Context) error {
	err := testenv.Eventually(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		up, err := promQuery(ctx, s.promURL, fmt.Sprintf(`up{job=%q} == 1`, job))
		return len(up) == 1, err
	})
	if err != nil {
		return fmt.Errorf("prometheus does not scrape the manager: %w\n%s", err, s.mon.Prometheus.LogTail(20))
	}
	want, err := readShippedRules()
	if err != nil {
		return err
	}
	loaded, err := promRules(ctx, s.promURL)
	if err != nil {
		return err
	}
	for _, r := range want.alerts() {
		if _, ok := loaded[r.Alert]; !ok {
			return fmt.Errorf("prometheus did not load the alert %s\n%s", r.Alert, s.mon.Prometheus.LogTail(20))
		}
	}
	err = testenv.Eventually(ctx, time.Minute, 100*time.Millisecond, func(context.Context) (bool, error) {
		return len(s.receivers[deadman].find(match{alertname: "Watchdog", status: "firing"})) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("the Watchdog did not reach the deadman webhook: %w\nprometheus:\n%s\nalertmanager:\n%s",
			err, s.mon.Prometheus.LogTail(10), s.mon.Alertmanager.LogTail(10))
	}
	return nil
}

// stop ends everything start started, in reverse order, and reports every failure.
func (s *suite) stop() error { return s.parts.Stop() }
