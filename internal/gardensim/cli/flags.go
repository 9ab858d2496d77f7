package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/shootcluster"
)

// settings are the parsed flags.
type settings struct {
	scenario          string
	scenarioFile      string
	shootPattern      string
	faultAfter        optionalDuration
	faultFor          optionalDuration
	projects          string
	shootMode         string
	operationDuration time.Duration
	errorRetryDelay   time.Duration
	progressInterval  time.Duration
	listen            string
	adminListen       string
	kubeconfigOut     string
	adminKubeconfig   string
	assets            string
	seed              uint64
	token             string
	verbosity         int
	processOutput     bool
	defaultDomain     string
	unreadyRegions    string
	unregistered      string
}

// optionalDuration is a duration flag that knows whether it was set.
type optionalDuration struct{ d *time.Duration }

func (o *optionalDuration) String() string {
	if o.d == nil {
		return ""
	}
	return o.d.String()
}

func (o *optionalDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("parse duration: %w", err)
	}
	o.d = &d
	return nil
}

// newFlagSet declares every flag into s.
func newFlagSet(s *settings, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gardensim", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&s.scenario, "scenario", "healthy", "shipped scenario to start with (see Scenarios below)")
	fs.StringVar(&s.scenarioFile, "scenario-file", "", "YAML scenario file to start with instead of --scenario")
	fs.StringVar(&s.shootPattern, "shoot-pattern", "", "shoot name glob replacing the scenario's shoot-specific patterns (e.g. *quota*, *stuck*)")
	fs.Var(&s.faultAfter, "fault-after", "`duration` after start-up at which the scenario's time-bounded fault rules start (outage: 30s)")
	fs.Var(&s.faultFor, "fault-for", "`duration` of the scenario's time-bounded fault rules (outage: 2m)")
	fs.StringVar(&s.projects, "projects", "kyma", "comma-separated Gardener projects; each gets the namespace garden-<project>")
	fs.StringVar(&s.shootMode, "shoot-mode", string(shootcluster.ModeDedicated), "dedicated: a kube-apiserver per shoot (one shared etcd); shared: one kube-apiserver for all shoots")
	fs.DurationVar(&s.operationDuration, "operation-duration", 5*time.Second, "how long a shoot Create, Reconcile or Delete takes")
	fs.DurationVar(&s.errorRetryDelay, "error-retry-delay", 10*time.Second, "how long an operation in state Error first waits before it is retried; repeated Errors back off exponentially")
	fs.DurationVar(&s.progressInterval, "progress-interval", 0, "how often a running operation's progress is written (default a fifth of --operation-duration)")
	fs.StringVar(&s.listen, "listen", "127.0.0.1:0", "address of the Gardener API (HTTPS front proxy); port 0 picks a free one")
	fs.StringVar(&s.adminListen, "admin-listen", "127.0.0.1:8686", "address of the admin HTTP API (rules, scenarios); empty disables it")
	fs.StringVar(&s.kubeconfigOut, "kubeconfig-out", "", "file to write the manager's garden kubeconfig to (removed on exit)")
	fs.StringVar(&s.adminKubeconfig, "garden-admin-kubeconfig-out", "", "file to write an admin kubeconfig of the garden API server itself to: no proxy, so no faults and no request log, for inspecting a run (removed on exit)")
	fs.StringVar(&s.assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with the kube-apiserver and etcd binaries (default $KUBEBUILDER_ASSETS); gardener-apiserver is ../gardener/gardener-apiserver from it, or $GARDENER_APISERVER, and gardener-scheduler beside it")
	fs.Uint64Var(&s.seed, "seed", 1, "seed of every random choice (probabilistic faults and lifecycle rules)")
	fs.StringVar(&s.token, "token", "", "bearer token the Gardener API accepts (default: random)")
	fs.StringVar(&s.defaultDomain, "default-domain", gardensim.DefaultDomain, "the garden's default DNS domain: scheduled shoots get spec.dns.domain <shoot>.<project>.<domain>")
	fs.StringVar(&s.unreadyRegions, "unready-seed-regions", "", "comma-separated regions whose seeds start unready (no shoot is scheduled there)")
	fs.StringVar(&s.unregistered, "unregistered-extensions", "", "comma-separated extension types (e.g. acl) the garden does not register, so that shoots listing them are refused")
	fs.IntVar(&s.verbosity, "v", 0, "log verbosity")
	fs.BoolVar(&s.processOutput, "process-output", false, "copy the output of every kube-apiserver and etcd to stderr")
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
		return settings{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch shootcluster.Mode(s.shootMode) {
	case shootcluster.ModeDedicated, shootcluster.ModeShared:
	default:
		return settings{}, fmt.Errorf("--shoot-mode must be dedicated or shared, not %q", s.shootMode)
	}
	return s, nil
}

// loadScenario returns the scenario the flags select.
func (s settings) loadScenario() (scenario.Scenario, error) {
	var (
		sc  scenario.Scenario
		err error
	)
	if s.scenarioFile != "" {
		sc, err = scenario.LoadFile(s.scenarioFile)
	} else {
		sc, err = scenario.Load(s.scenario)
	}
	if err != nil {
		return scenario.Scenario{}, err
	}
	if s.shootPattern != "" {
		sc = sc.WithShootPattern(s.shootPattern)
	}
	return sc.WithFaultWindow(s.faultAfter.d, s.faultFor.d), nil
}

// options turns the settings into simulator options.
func (s settings) options(sc scenario.Scenario) []gardensim.Option {
	return []gardensim.Option{
		gardensim.WithScenario(sc),
		gardensim.WithProjects(splitList(s.projects)...),
		gardensim.WithDefaultDomain(s.defaultDomain),
		gardensim.WithUnreadySeedRegions(splitList(s.unreadyRegions)...),
		gardensim.WithUnregisteredExtensions(splitList(s.unregistered)...),
		gardensim.WithShootMode(shootcluster.Mode(s.shootMode)),
		gardensim.WithOperationDuration(s.operationDuration),
		gardensim.WithErrorRetryDelay(s.errorRetryDelay),
		gardensim.WithProgressInterval(s.progressInterval),
		gardensim.WithListenAddress(s.listen),
		gardensim.WithAdminAddress(s.adminListen),
		gardensim.WithAssets(s.assets),
		gardensim.WithSeed(s.seed),
		gardensim.WithToken(s.token),
	}
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(value string) []string {
	var out []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// isHelp reports whether err asks for the help only.
func isHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
