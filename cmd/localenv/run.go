package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/garden"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/shootcluster"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Fixed parts of the layout and wiring.
const (
	runtimeNamespace = "kcp-system"
	gardenProject    = "kyma"
	rulesFile        = "config/prometheus/rules.yaml"
	alertmanagerFile = "config/alertmanager/alertmanager.yaml"
)

// env is the running local environment.
// Its stack stops what started in reverse order.
type env struct {
	s       settings
	out     *localenv.Printer
	log     logr.Logger
	stack   *stack.Stack
	manager *stack.Manager
}

// run is the command: it returns nil after an orderly stop on ctx's end, and an error when
// something could not start or failed while running (after stopping what runs). stopSignals
// restores the default signal handling, so that a second Ctrl-C ends the program at once.
func run(ctx context.Context, stopSignals func(), args []string, stdout io.Writer) error {
	s, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	sc, err := scenario.Load(s.scenario)
	if err != nil {
		return err
	}
	if err := preflight(s); err != nil {
		return err
	}
	logFile, err := openLog(filepath.Join(s.workDir, "manager.log"))
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	log := funcr.New(func(prefix, args string) {
		fmt.Fprintln(logFile, time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{Verbosity: s.verbosity})
	ctrl.SetLogger(log)
	// client-go's informers log through the logger of their context.
	ctx = logr.NewContext(ctx, log)

	e := &env{s: s, out: localenv.NewPrinter(stdout), log: log}
	e.stack = &stack.Stack{Report: e.reportStop}
	defer func() {
		// A panic must not leave etcd and the API servers behind: they run in process groups
		// of their own and outlive this program.
		if r := recover(); r != nil {
			_ = e.unwind()
			panic(r)
		}
	}()
	e.out.Linef("Infrastructure Manager, locally: scenario %s: %s", sc.Name, sc.Description)
	e.out.Linef("Logs: manager and simulator in %s; Ctrl-C stops everything.", logFile.Name())
	runErr := e.start(ctx, sc)
	if runErr != nil && ctx.Err() != nil {
		// Whatever failed, it failed because of the interrupt.
		e.out.Linef("Start-up interrupted (%v).", runErr)
		runErr = nil
	}
	if runErr == nil {
		runErr = e.wait(ctx)
	}
	stopSignals()
	if ctx.Err() != nil {
		e.out.Line("Interrupted: stopping everything in reverse order (Ctrl-C again exits at once, leaving processes behind).")
	} else {
		e.out.Line("Stopping everything in reverse order.")
	}
	return errors.Join(runErr, e.unwind())
}

// preflight fails early, with a hint, on what would fail later.
func preflight(s settings) error {
	if _, err := os.Stat(controlplane.CRDDir); err != nil {
		return fmt.Errorf("run from the repository root ('make run' does): %w", err)
	}
	if err := controlplane.CheckAssets(s.assets); err != nil {
		return err
	}
	if err := garden.CheckBinary(garden.DefaultBinary(s.assets)); err != nil {
		return err
	}
	if _, err := os.Stat(s.samples); err != nil {
		return fmt.Errorf("samples directory: %w", err)
	}
	if s.metricsAddr != "0" {
		ln, err := net.Listen("tcp", s.metricsAddr)
		if err != nil {
			return fmt.Errorf("metrics address %s is not free (choose another with RUN_ARGS=--metrics-address=127.0.0.1:18080): %w", s.metricsAddr, err)
		}
		_ = ln.Close()
	}
	return nil
}

func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	return f, nil
}

// reportStop prints one line for each part the stack stopped.
func (e *env) reportStop(name string, took time.Duration, err error) {
	if err != nil {
		e.out.Line(err.Error())
		return
	}
	e.out.Linef("Stopped %s (%s).", name, took.Round(10*time.Millisecond))
}

// unwind stops everything in reverse start order, reporting each.
func (e *env) unwind() error {
	err := e.stack.Stop()
	if err == nil {
		e.out.Line("Everything stopped.")
	}
	return err
}

// start brings everything up in order; what started is stopped by unwind, also after an error.
// Each phase checks for an interrupt before it begins.
func (e *env) start(ctx context.Context, sc scenario.Scenario) error {
	var (
		cp  *controlplane.ControlPlane
		sim *gardensim.Simulator
		err error
	)
	tracker := localenv.NewTracker()
	phases := []func() error{
		func() error { cp, err = e.startControlPlane(ctx); return err },
		func() error { sim, err = e.startSimulator(ctx, sc); return err },
		func() error { return e.startMonitoring(ctx) },
		func() error { return e.startManager(cp, sim) },
		func() error { return e.startProgress(ctx, cp, tracker) },
		func() error { return e.applySamples(ctx, cp, tracker) },
	}
	for _, phase := range phases {
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err := phase(); err != nil {
			return err
		}
	}
	return nil
}

// errInterrupted ends the start-up on Ctrl-C; it is no failure.
var errInterrupted = errors.New("interrupted during start-up")

func (e *env) startControlPlane(ctx context.Context) (*controlplane.ControlPlane, error) {
	e.out.Linef("Control plane: starting etcd and kube-apiserver from %s ...", e.s.assets)
	began := time.Now()
	cp, err := e.stack.StartControlPlane(ctx, stack.ControlPlaneOptions{Assets: e.s.assets, Namespace: runtimeNamespace})
	if err != nil {
		return nil, err
	}
	e.out.Linef("Control plane: %s ready in %s, CRDs and admission policy installed, namespace %s created.",
		cp.Config.Host, time.Since(began).Round(100*time.Millisecond), runtimeNamespace)
	if e.s.kubeconfigOut != "" {
		if err := localenv.WriteKubeconfig(e.s.kubeconfigOut, "local", runtimeNamespace, cp.Config); err != nil {
			return nil, err
		}
		e.stack.AddQuiet("kubeconfig "+e.s.kubeconfigOut, func() error { return removeFile(e.s.kubeconfigOut) })
		e.out.Linef("Control plane: admin kubeconfig in %s: kubectl --kubeconfig %s get runtimes", e.s.kubeconfigOut, e.s.kubeconfigOut)
	}
	return cp, nil
}

func (e *env) startSimulator(ctx context.Context, sc scenario.Scenario) (*gardensim.Simulator, error) {
	seed := e.s.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()%1_000_000) + 1
	}
	e.out.Linef("Gardener simulator: starting (dedicated shoot API servers, operations take %s, seed %d) ...", e.s.operationDuration, seed)
	began := time.Now()
	sim, err := e.stack.StartSimulator(ctx,
		gardensim.WithSeed(seed),
		gardensim.WithAssets(e.s.assets),
		gardensim.WithProjects(gardenProject),
		gardensim.WithShootMode(shootcluster.ModeDedicated),
		gardensim.WithScenario(sc),
		gardensim.WithOperationDuration(e.s.operationDuration),
		gardensim.WithLogger(e.log.WithName("gardensim")))
	if err != nil {
		return nil, fmt.Errorf("start Gardener simulator: %w", err)
	}
	e.watchScenario(sim)
	e.out.Linef("Gardener simulator: API %s, admin API %s, ready in %s.",
		sim.RESTConfig().Host, sim.AdminURL(), time.Since(began).Round(100*time.Millisecond))
	gardenKubeconfig := filepath.Join(e.s.workDir, "garden-kubeconfig")
	if err := localenv.WriteKubeconfig(gardenKubeconfig, "garden", gardensim.ProjectNamespace(gardenProject), sim.GardenAdminConfig()); err != nil {
		return nil, err
	}
	e.stack.AddQuiet("kubeconfig "+gardenKubeconfig, func() error { return removeFile(gardenKubeconfig) })
	e.out.Linef("Gardener simulator: kubectl --kubeconfig %s get shoots; change faults: curl %s/scenarios", gardenKubeconfig, sim.AdminURL())
	return sim, nil
}

func (e *env) startMonitoring(ctx context.Context) error {
	if !e.s.monitoring || e.s.metricsAddr == "0" {
		e.out.Line("Monitoring: off (--monitoring=false or no metrics address).")
		return nil
	}
	prom, am := stack.FindMonitoring()
	if prom == "" {
		e.out.Line("Monitoring: Prometheus and Alertmanager are not installed, skipped (build them with: make monitoring-tools).")
		return nil
	}
	receiverAddr := ""
	if am != "" {
		addr, err := e.startAlertReceiver()
		if err != nil {
			return err
		}
		receiverAddr = addr
	}
	var amConfig []byte
	if am != "" {
		raw, err := os.ReadFile(alertmanagerFile)
		if err != nil {
			return fmt.Errorf("start monitoring: read Alertmanager configuration: %w", err)
		}
		amConfig = localenv.AlertmanagerConfig(raw, receiverAddr)
	}
	m, err := e.stack.StartMonitoring(ctx, stack.MonitoringOptions{
		Prometheus: prom, Alertmanager: am,
		RulesFile: rulesFile, AlertmanagerConfig: amConfig,
		MetricsAddr: e.s.metricsAddr,
		Dir:         e.s.workDir, PrometheusPort: 9090, AlertmanagerPort: 9093,
	})
	if err != nil {
		return fmt.Errorf("start monitoring: %w", err)
	}
	for _, p := range m.Processes() {
		go func() {
			<-p.Done()
			if !e.stack.Stopping() {
				e.out.Linef("Monitoring: %s exited by itself; the rest keeps running (its log is in %s/%s).", p.Name(), e.s.workDir, p.Name())
			}
		}()
	}
	e.out.Linef("Monitoring: Prometheus %s (alerts: %s/alerts), scraping the manager every 5s.", m.PrometheusURL, m.PrometheusURL)
	if m.AlertmanagerURL != "" {
		e.out.Linef("Monitoring: Alertmanager %s; its notifications print here as ALERT lines.", m.AlertmanagerURL)
	} else {
		e.out.Line("Monitoring: Alertmanager is not installed, so no notifications (build it with: make monitoring-tools).")
	}
	return nil
}

// startAlertReceiver serves the webhook that stands in for every Alertmanager receiver.
func (e *env) startAlertReceiver() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen for alert notifications: %w", err)
	}
	srv := &http.Server{Handler: localenv.NewAlertReceiver(e.out.Line), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error(err, "Alert receiver stopped")
		}
	}()
	e.stack.AddQuiet("alert receiver", srv.Close)
	return ln.Addr().String(), nil
}

// startManager runs the manager in this process with short, demo-friendly retry settings.
func (e *env) startManager(cp *controlplane.ControlPlane, sim *gardensim.Simulator) error {
	o := manager.DefaultOptions()
	o.GardenerProject = gardenProject
	o.Retry = retry.Policy{Initial: 2 * time.Second, Factor: 2, Cap: 30 * time.Second, MaxAttempts: 6, MaxDuration: 0, Jitter: 0.5}
	o.PollInterval = 5 * time.Second
	o.ShootCreateDeadline = 5 * time.Minute
	o.FailedProbeInterval = 2 * time.Minute
	// The local Prometheus scrapes plain HTTP on loopback.
	o.MetricsBindAddress, o.MetricsSecure = e.s.metricsAddr, false
	o.HealthProbeBindAddress = "0"
	o.SkipNameValidation = true
	// The manager stops first, before what it talks to.
	var err error
	e.manager, err = e.stack.StartManager(context.Background(), stack.ManagerOptions{
		Config: cp.Config, Garden: sim.RESTConfig(), Options: o, Logger: e.log, StopTimeout: 45 * time.Second,
	})
	if err != nil {
		return err
	}
	metrics := "off"
	if o.MetricsBindAddress != "0" {
		metrics = "http://" + o.MetricsBindAddress + "/metrics"
	}
	e.out.Linef("Manager: running in-process (retry 2s x2 up to 30s, 6 attempts; shoot deadline 5m); log %s/manager.log; metrics %s.",
		e.s.workDir, metrics)
	return nil
}
