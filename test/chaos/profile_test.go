package chaos_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

// profile is how hard one run pushes: how many Runtimes, how much chaos, and the settings the
// binaries run with. Every field is a flag (after -args) whose default comes from a CHAOS_*
// environment variable, else from the short profile that `make test` runs.
type profile struct {
	// Runtimes are provisioned at once; Stuck of them get shoots whose creation hangs, so they
	// must end Failed (StepTimedOut) when WaitForShoot's deadline passes.
	Runtimes, Stuck int
	// Kills SIGKILL a manager replica at random moments of the chaos window; LeaderKills of
	// them aim at the current leader.
	Kills, LeaderKills int
	// APIServerRestarts stop the control plane's kube-apiserver for APIServerDown and start it
	// again on the same port with the same etcd.
	APIServerRestarts int
	APIServerDown     time.Duration
	// Replicas is the number of manager processes, with leader election.
	Replicas int
	// Seed drives every random choice: kill moments and targets, stuck runtimes, the
	// simulator's faults. Zero picks one, which the run prints.
	Seed uint64
	// Transient is the share of Gardener calls answered 500 or 503, dropped, or whose reply is
	// lost; Malformed the share answered with a broken body.
	Transient, Malformed float64
	// Window is the time after the first Runtime's creation within which the chaos happens.
	Window time.Duration
	// Spread is the time over which the Runtimes are created, one after the other at random
	// moments, so that the chaos meets Runtimes in every step.
	Spread time.Duration
	// Settle bounds how long after the window the Runtimes may take to be Ready or Failed.
	Settle time.Duration
	// Cleanup bounds how long after the deletion of every Runtime their traces may take to go.
	Cleanup time.Duration
	// OperationDuration is how long the simulator takes for a shoot operation.
	OperationDuration time.Duration
	// The manager's deadlines of its waiting steps, its safety poll and its Failed probe.
	ShootCreateDeadline, ShootDeleteDeadline, KubeconfigDeadline, Poll, FailedProbe time.Duration
	// RetryAttempts is the manager's retry budget per step.
	RetryAttempts int
	// DeadlineGrace is how long past status.step.deadline a Runtime may still be seen waiting
	// without being Failed: the leader has to notice, and may just have been killed.
	DeadlineGrace time.Duration
	// Keep keeps the work directory (logs, kubeconfigs) even when the run passes.
	Keep bool
}

// shortProfile is what a plain `go test ./...` runs: small enough for a few minutes, with every
// kind of chaos at least once.
func shortProfile() profile {
	return profile{
		Runtimes: 10, Stuck: 1,
		Kills: 3, LeaderKills: 1,
		APIServerRestarts: 1, APIServerDown: 5 * time.Second,
		Replicas:  2,
		Transient: 0.10, Malformed: 0.03,
		Window:              75 * time.Second,
		Spread:              40 * time.Second,
		Settle:              4 * time.Minute,
		Cleanup:             3 * time.Minute,
		OperationDuration:   10 * time.Second,
		ShootCreateDeadline: 100 * time.Second,
		ShootDeleteDeadline: 3 * time.Minute,
		KubeconfigDeadline:  2 * time.Minute,
		Poll:                5 * time.Second,
		FailedProbe:         10 * time.Minute,
		RetryAttempts:       6,
		DeadlineGrace:       30 * time.Second,
	}
}

// prof is the profile of this run, filled by the flags.
var prof = shortProfile()

func init() {
	d := shortProfile()
	intVar(&prof.Runtimes, "runtimes", d.Runtimes, "Runtimes to provision")
	intVar(&prof.Stuck, "stuck", d.Stuck, "of them, Runtimes whose shoot creation hangs until WaitForShoot's deadline")
	intVar(&prof.Kills, "kills", d.Kills, "SIGKILLs of a manager replica within the chaos window")
	intVar(&prof.LeaderKills, "leader-kills", d.LeaderKills, "of the kills, those aimed at the current leader")
	intVar(&prof.APIServerRestarts, "apiserver-restarts", d.APIServerRestarts, "stops and starts of the control plane's kube-apiserver")
	durationVar(&prof.APIServerDown, "apiserver-down", d.APIServerDown, "how long the kube-apiserver stays stopped")
	intVar(&prof.Replicas, "replicas", d.Replicas, "manager replicas (leader election)")
	uintVar(&prof.Seed, "seed", d.Seed, "seed of every random choice; 0 picks one")
	floatVar(&prof.Transient, "transient", d.Transient, "share of Gardener calls with a transient fault (500, 503, dropped, reply lost)")
	floatVar(&prof.Malformed, "malformed", d.Malformed, "share of Gardener calls answered with a malformed body")
	durationVar(&prof.Window, "window", d.Window, "time after the first Runtime's creation within which kills and restarts happen")
	durationVar(&prof.Spread, "spread", d.Spread, "time over which the Runtimes are created")
	durationVar(&prof.Settle, "settle", d.Settle, "how long after the window every Runtime may take to be Ready or Failed")
	durationVar(&prof.Cleanup, "cleanup", d.Cleanup, "how long after deleting every Runtime their shoots and objects may take to go")
	durationVar(&prof.OperationDuration, "operation-duration", d.OperationDuration, "the simulator's shoot operation duration")
	durationVar(&prof.ShootCreateDeadline, "shoot-create-deadline", d.ShootCreateDeadline, "the manager's --shoot-create-deadline")
	durationVar(&prof.ShootDeleteDeadline, "shoot-delete-deadline", d.ShootDeleteDeadline, "the manager's --shoot-delete-deadline")
	durationVar(&prof.KubeconfigDeadline, "kubeconfig-deadline", d.KubeconfigDeadline, "the manager's --kubeconfig-deadline")
	durationVar(&prof.Poll, "poll-interval", d.Poll, "the manager's --poll-interval")
	durationVar(&prof.FailedProbe, "failed-probe-interval", d.FailedProbe, "the manager's --failed-probe-interval")
	intVar(&prof.RetryAttempts, "retry-attempts", d.RetryAttempts, "the manager's --retry-attempts")
	durationVar(&prof.DeadlineGrace, "deadline-grace", d.DeadlineGrace, "how long past its step deadline a Runtime may be seen waiting without being Failed")
	boolVar(&prof.Keep, "keep", d.Keep, "keep the work directory even when the run passes")
}

// envName is the environment variable behind a flag: runtimes → CHAOS_RUNTIMES.
func envName(flagName string) string {
	return "CHAOS_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fromEnv returns the environment's value for a flag, parsed, or def. A value that does not
// parse panics at start-up with the variable's name, rather than being ignored.
func fromEnv[T any](name string, def T, parse func(string) (T, error)) T {
	v, ok := os.LookupEnv(envName(name))
	if !ok || v == "" {
		return def
	}
	out, err := parse(v)
	if err != nil {
		panic(fmt.Sprintf("chaos: %s=%q: %v", envName(name), v, err))
	}
	return out
}

func intVar(p *int, name string, def int, usage string) {
	flag.IntVar(p, name, fromEnv(name, def, strconv.Atoi), usage+" ($"+envName(name)+")")
}

func uintVar(p *uint64, name string, def uint64, usage string) {
	parse := func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }
	flag.Uint64Var(p, name, fromEnv(name, def, parse), usage+" ($"+envName(name)+")")
}

func floatVar(p *float64, name string, def float64, usage string) {
	parse := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	flag.Float64Var(p, name, fromEnv(name, def, parse), usage+" ($"+envName(name)+")")
}

func durationVar(p *time.Duration, name string, def time.Duration, usage string) {
	flag.DurationVar(p, name, fromEnv(name, def, time.ParseDuration), usage+" ($"+envName(name)+")")
}

func boolVar(p *bool, name string, def bool, usage string) {
	flag.BoolVar(p, name, fromEnv(name, def, strconv.ParseBool), usage+" ($"+envName(name)+")")
}

// validate refuses a profile that cannot run, and picks a seed when none was given.
func (p *profile) validate() error {
	switch {
	case p.Runtimes < 1 || p.Runtimes > 99:
		return fmt.Errorf("-runtimes=%d: want 1 to 99", p.Runtimes)
	case p.Stuck < 0 || p.Stuck >= p.Runtimes:
		return fmt.Errorf("-stuck=%d: want 0 to runtimes-1", p.Stuck)
	case p.Kills < 0 || p.LeaderKills < 0 || p.LeaderKills > p.Kills:
		return fmt.Errorf("-kills=%d -leader-kills=%d: want 0 <= leader-kills <= kills", p.Kills, p.LeaderKills)
	case p.Replicas < 1:
		return fmt.Errorf("-replicas=%d: want at least 1", p.Replicas)
	case p.Transient < 0 || p.Malformed < 0 || p.Transient+p.Malformed >= 1:
		return fmt.Errorf("-transient=%v -malformed=%v: want shares that add up to less than 1", p.Transient, p.Malformed)
	case p.RetryAttempts < 1:
		return fmt.Errorf("-retry-attempts=%d: want at least 1", p.RetryAttempts)
	case p.Window <= 0 || p.Spread < 0:
		return fmt.Errorf("-window=%s -spread=%s: want a positive window and a spread that is not negative", p.Window, p.Spread)
	}
	if p.Seed == 0 {
		p.Seed = rand.Uint64N(1_000_000) + 1
	}
	return nil
}

// quiet reports whether the profile has no chaos but kube-apiserver restarts: no Gardener
// faults, no kills, one replica. Every write of such a run is the manager's own doing.
func (p profile) quiet() bool {
	return p.Transient == 0 && p.Malformed == 0 && p.Kills == 0 && p.Replicas == 1
}

// String is the profile in one line, for the log and the table.
func (p profile) String() string {
	return fmt.Sprintf("seed %d: %d runtimes (%d stuck), %d replicas, %d kills (%d of the leader), %d kube-apiserver restarts (%s down), "+
		"%.0f%% transient and %.0f%% malformed Gardener replies, created over %s, chaos window %s, operations %s",
		p.Seed, p.Runtimes, p.Stuck, p.Replicas, p.Kills, p.LeaderKills, p.APIServerRestarts, p.APIServerDown,
		100*p.Transient, 100*p.Malformed, p.Spread, p.Window, p.OperationDuration)
}
