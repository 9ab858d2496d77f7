package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// MetricsJob is the Prometheus job of the manager's metrics; the rules select it.
const MetricsJob = "infrastructure-manager"

// MonitoringDir is where `make monitoring-tools` builds Prometheus and Alertmanager, relative to
// the repository root.
const MonitoringDir = "bin/monitoring"

// FindMonitoring returns the Prometheus and Alertmanager binaries to run, empty for a missing one.
// Each is the first executable of: the file that the environment variable PROMETHEUS or
// ALERTMANAGER names (the Makefile sets them), the build of `make monitoring-tools` in
// bin/monitoring under the working directory (localenv runs from the repository root), and the
// one on PATH (Debian installs them as /usr/bin/prometheus and /usr/bin/prometheus-alertmanager).
func FindMonitoring() (prometheus, alertmanager string) {
	return FindMonitoringIn(".")
}

// FindMonitoringIn is FindMonitoring for the repository at root.
// It is for callers that run elsewhere, such as the end-to-end tests.
func FindMonitoringIn(root string) (prometheus, alertmanager string) {
	return findMonitoring(root, os.Getenv, exec.LookPath)
}

// findMonitoring is FindMonitoring with the repository root, the environment and the PATH lookup
// given.
func findMonitoring(root string, getenv func(string) string, lookPath func(string) (string, error)) (prometheus, alertmanager string) {
	find := func(env string, names ...string) string {
		if p := getenv(env); p != "" && isExecutable(p) {
			return p
		}
		if p := filepath.Join(root, MonitoringDir, names[0]); isExecutable(p) {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
		for _, name := range names {
			if p, err := lookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	return find("PROMETHEUS", "prometheus"), find("ALERTMANAGER", "alertmanager", "prometheus-alertmanager")
}

// isExecutable reports whether path is a regular file that someone may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// MonitoringOptions say how to run Prometheus and Alertmanager.
type MonitoringOptions struct {
	// Prometheus is the Prometheus binary; required.
	Prometheus string
	// Alertmanager is the Alertmanager binary. Empty runs Prometheus alone.
	Alertmanager string
	// RulesFile is the rules file Prometheus loads, such as config/prometheus/rules.yaml.
	RulesFile string
	// AlertmanagerConfig is the configuration Alertmanager runs with.
	AlertmanagerConfig []byte
	// MetricsAddr is the host:port of the manager's metrics endpoint.
	MetricsAddr string
	// Dir receives the configurations, the data and the logs.
	// Its prometheus and alertmanager subdirectories are replaced on every start.
	Dir string
	// PrometheusPort and AlertmanagerPort are the preferred loopback ports.
	// Zero or a taken port is replaced by a free one.
	PrometheusPort, AlertmanagerPort int
	// ScrapeInterval is how often Prometheus scrapes the manager and evaluates the rules.
	// Zero is 5s.
	ScrapeInterval time.Duration
	// ScrapeTimeout bounds a scrape. Zero is 4s.
	ScrapeTimeout time.Duration
	// PrometheusArgs are further flags of Prometheus.
	PrometheusArgs []string
	// StopTimeout is how long Stop waits after SIGTERM before it kills. Zero is 15s.
	StopTimeout time.Duration
}

// Monitoring is a running Prometheus and, if given, Alertmanager.
type Monitoring struct {
	// PrometheusURL and AlertmanagerURL are where they serve.
	// AlertmanagerURL is empty without Alertmanager.
	PrometheusURL, AlertmanagerURL string
	// Prometheus and Alertmanager are the processes. Alertmanager is nil without it.
	Prometheus, Alertmanager *subprocess.Process
	// AlertmanagerConfigFile is the configuration file Alertmanager runs with.
	AlertmanagerConfigFile string
	// Logs are the log files of the processes.
	Logs []string

	procs       []*subprocess.Process
	stopTimeout time.Duration
}

// StartMonitoring is the package's StartMonitoring; the stack records the stop.
func (s *Stack) StartMonitoring(ctx context.Context, o MonitoringOptions) (*Monitoring, error) {
	m, err := StartMonitoring(ctx, o)
	if err != nil {
		return nil, err
	}
	name := "Prometheus"
	if m.Alertmanager != nil {
		name += " and Alertmanager"
	}
	s.Add(name, m.Stop)
	return m, nil
}

// StartMonitoring starts Alertmanager, if given, then Prometheus. Both serve on loopback.
// It returns once both are ready. On error it stops what it started.
func StartMonitoring(ctx context.Context, o MonitoringOptions) (*Monitoring, error) {
	m := &Monitoring{stopTimeout: orDefault(o.StopTimeout, 15*time.Second)}
	amAddr := ""
	if o.Alertmanager != "" {
		var err error
		if amAddr, err = m.startAlertmanager(ctx, o); err != nil {
			return nil, errors.Join(err, m.Stop())
		}
	}
	if err := m.startPrometheus(ctx, o, amAddr); err != nil {
		return nil, errors.Join(err, m.Stop())
	}
	return m, nil
}

func (m *Monitoring) startAlertmanager(ctx context.Context, o MonitoringOptions) (string, error) {
	dir, err := freshDir(o.Dir, "alertmanager")
	if err != nil {
		return "", err
	}
	m.AlertmanagerConfigFile = filepath.Join(dir, "alertmanager.yaml")
	if err := os.WriteFile(m.AlertmanagerConfigFile, o.AlertmanagerConfig, 0o600); err != nil {
		return "", fmt.Errorf("write Alertmanager configuration: %w", err)
	}
	addr, err := subprocess.LoopbackAddress(o.AlertmanagerPort)
	if err != nil {
		return "", err
	}
	p, logFile, err := m.start("alertmanager", dir, o.Alertmanager,
		"--config.file="+m.AlertmanagerConfigFile,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=", // a single instance: no gossip port
	)
	if err != nil {
		return "", err
	}
	m.Alertmanager = p
	m.AlertmanagerURL = "http://" + addr
	if err := p.WaitHTTP(ctx, m.AlertmanagerURL+"/-/ready", 30*time.Second); err != nil {
		return "", fmt.Errorf("see %s: %w", logFile, err)
	}
	return addr, nil
}

func (m *Monitoring) startPrometheus(ctx context.Context, o MonitoringOptions, amAddr string) error {
	dir, err := freshDir(o.Dir, "prometheus")
	if err != nil {
		return err
	}
	rules, err := filepath.Abs(o.RulesFile)
	if err != nil {
		return fmt.Errorf("locate rules file: %w", err)
	}
	if _, err := os.Stat(rules); err != nil {
		return fmt.Errorf("rules file: %w", err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	interval, timeout := orDefault(o.ScrapeInterval, 5*time.Second), orDefault(o.ScrapeTimeout, 4*time.Second)
	if err := os.WriteFile(cfg, PrometheusConfig(o.MetricsAddr, rules, amAddr, interval, timeout), 0o600); err != nil {
		return fmt.Errorf("write Prometheus configuration: %w", err)
	}
	addr, err := subprocess.LoopbackAddress(o.PrometheusPort)
	if err != nil {
		return err
	}
	args := append([]string{
		"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	}, o.PrometheusArgs...)
	p, logFile, err := m.start("prometheus", dir, o.Prometheus, args...)
	if err != nil {
		return err
	}
	m.Prometheus = p
	m.PrometheusURL = "http://" + addr
	if err := p.WaitHTTP(ctx, m.PrometheusURL+"/-/ready", 60*time.Second); err != nil {
		return fmt.Errorf("see %s: %w", logFile, err)
	}
	return nil
}

// start runs one binary with its output in dir/<name>.log.
func (m *Monitoring) start(name, dir, bin string, args ...string) (*subprocess.Process, string, error) {
	logFile := filepath.Join(dir, name+".log")
	p, err := subprocess.Start(name, subprocess.Options{Log: logFile}, bin, args...)
	if err != nil {
		return nil, "", err
	}
	m.procs = append(m.procs, p)
	m.Logs = append(m.Logs, logFile)
	return p, logFile, nil
}

// Processes are the running processes, in start order.
func (m *Monitoring) Processes() []*subprocess.Process { return m.procs }

// Stop ends the processes in reverse start order.
// Prometheus goes first, so it sends nothing to a stopped Alertmanager.
func (m *Monitoring) Stop() error {
	var errs []error
	for i := len(m.procs) - 1; i >= 0; i-- {
		errs = append(errs, m.procs[i].Stop(m.stopTimeout))
	}
	m.procs = nil
	return errors.Join(errs...)
}

// freshDir empties and creates parent/name.
func freshDir(parent, name string) (string, error) {
	dir := filepath.Join(parent, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}

// PrometheusConfig is the configuration of a local Prometheus.
// It scrapes the manager at metricsAddr as job infrastructure-manager, every interval within timeout.
// It evaluates rulesFile every interval.
// It sends alerts to the Alertmanager at amAddr; empty sends none.
func PrometheusConfig(metricsAddr, rulesFile, amAddr string, interval, timeout time.Duration) []byte {
	alerting := ""
	if amAddr != "" {
		alerting = fmt.Sprintf(`alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
`, amAddr)
	}
	return fmt.Appendf(nil, `# Generated by internal/stack for one run; edit config/prometheus/rules.yaml instead.
global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: %s
rule_files:
  - %q
%sscrape_configs:
  - job_name: %s
    static_configs:
      - targets: [%q]
`, interval, timeout, interval, rulesFile, alerting, MetricsJob, metricsAddr)
}
