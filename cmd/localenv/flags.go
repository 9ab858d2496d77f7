package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
)

// settings are the parsed flags.
type settings struct {
	scenario          string
	samples           string
	operationDuration time.Duration
	metricsAddr       string
	kubeconfigOut     string
	workDir           string
	assets            string
	monitoring        bool
	verbosity         int
	seed              uint64
}

func newFlagSet(s *settings, out io.Writer) *flag.FlagSet {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join("bin", "k8s")
	}
	fs := flag.NewFlagSet("localenv", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&s.scenario, "scenario", "healthy", "fault scenario of the Gardener simulator (see Scenarios below)")
	fs.StringVar(&s.samples, "samples", filepath.Join("config", "samples"), "`directory` whose *.yaml objects are created once everything runs")
	fs.DurationVar(&s.operationDuration, "operation-duration", 10*time.Second, "how long the simulator takes for a shoot Create, Reconcile or Delete")
	fs.StringVar(&s.metricsAddr, "metrics-address", "127.0.0.1:8080", "`host:port` of the manager's metrics, which Prometheus scrapes")
	fs.StringVar(&s.kubeconfigOut, "kubeconfig-out", filepath.Join("bin", "local", "kubeconfig"), "`file` to write an admin kubeconfig of the local control plane to; removed on exit; empty: none")
	fs.StringVar(&s.workDir, "work-dir", filepath.Join("bin", "local"), "`directory` for the logs, the garden kubeconfig and the Prometheus and Alertmanager data")
	fs.StringVar(&s.assets, "assets", assets, "`directory` with the kube-apiserver and etcd binaries (default $KUBEBUILDER_ASSETS, else bin/k8s)")
	fs.BoolVar(&s.monitoring, "monitoring", true, "start Prometheus and Alertmanager when they are installed")
	fs.Uint64Var(&s.seed, "seed", 0, "seed of the simulator's random faults; 0 picks one, printed at start so --seed repeats a run")
	fs.IntVar(&s.verbosity, "v", 0, "verbosity of the manager log")
	fs.Usage = func() { usage(fs, out) }
	return fs
}

// parse reads args; it returns flag.ErrHelp after printing the help.
func parse(args []string, out io.Writer) (settings, error) {
	var s settings
	fs := newFlagSet(&s, out)
	if err := fs.Parse(args); err != nil {
		return settings{}, fmt.Errorf("parse flags: %w", err)
	}
	if fs.NArg() > 0 {
		return settings{}, fmt.Errorf("unexpected arguments %v (see --help)", fs.Args())
	}
	if s.operationDuration <= 0 {
		return settings{}, fmt.Errorf("--operation-duration must be positive, not %s", s.operationDuration)
	}
	return s, nil
}

const intro = `Usage: go run ./cmd/localenv [flags]      (make run [SCENARIO=name] [RUN_ARGS="flags"])

Runs Infrastructure Manager locally, from the repository root:
  1. a control plane: etcd and kube-apiserver from --assets, with the CRDs of config/crd/bases
     and the admission policy of config/admission, and the namespace kcp-system;
  2. the Gardener simulator (a garden kube-apiserver, one kube-apiserver per shoot) with the
     fault scenario of --scenario;
  3. Prometheus (scraping the manager every 5s, rules of config/prometheus/rules.yaml) and
     Alertmanager (config/alertmanager/alertmanager.yaml, its webhooks sent to a receiver in this
     program that prints "ALERT <name> firing|resolved -> <receiver>"), where they are installed
     (make monitoring-tools builds them into bin/monitoring; make run does so first);
  4. the manager, in this process, logging to <work-dir>/manager.log;
  5. then it creates every object of --samples/*.yaml and prints one line per change of a Runtime
     (TIME NAME STATE STEP ATTEMPT/LIMIT NEXT-RETRY REASON/MESSAGE), and a summary line when all
     are Ready.
Ctrl-C (SIGINT) or SIGTERM stops the manager, Prometheus and Alertmanager, the simulator and the
control plane, in that order, and exits 0. A second Ctrl-C exits at once.

While it runs (default paths):
  kubectl --kubeconfig bin/local/kubeconfig get runtimes           the local control plane
  kubectl --kubeconfig bin/local/garden-kubeconfig get shoots      the simulated Gardener
  kubectl --kubeconfig bin/local/kubeconfig apply -f my-runtime.yaml   more runtimes are shown too

Flags:
`

// usage prints the help: every flag and the scenarios.
func usage(fs *flag.FlagSet, out io.Writer) {
	fmt.Fprint(out, intro)
	fs.VisitAll(func(f *flag.Flag) {
		typ, text := flag.UnquoteUsage(f)
		if typ != "" {
			typ = " " + typ
		}
		fmt.Fprintf(out, "  --%s%s\n        %s", f.Name, typ, text)
		if f.DefValue != "" && f.DefValue != "0" && f.Name != "assets" {
			fmt.Fprintf(out, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(out)
	})
	fmt.Fprintln(out, "\nScenarios (--scenario, make run SCENARIO=...):")
	scenario.WriteList(out)
	fmt.Fprint(out, `
The samples react to the scenarios by their shoot names: sample-quota-stuck's shoot matches both
*quota* (quota-exceeded: three failed Creates, then Ready) and *stuck* (stuck: the Create never
ends, and the runtime fails when the 5m shoot deadline passes); flaky, throttled, outage and
retryable-error affect every runtime. Three runtimes make only about ten shoot requests (the
manager reads shoots from its cache), so flaky and throttled hit few or none of them in a run:
add runtimes, or vary --seed. Lines starting with SIMULATOR say when a scenario's rule hits.
`)
}
