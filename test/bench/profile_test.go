package bench_test

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// profile is the size and length of every scenario of a run.
type profile struct {
	// Name is short or full.
	Name string
	// P1Sizes are the provisioning runs' sizes; the largest fleet of this manager stays for P4.
	P1Sizes []int
	// P2Runtimes are in flight when Gardener goes down for P2Outage.
	P2Runtimes int
	P2Outage   time.Duration
	// P3Runtimes are in backoff when the manager restarts; P3Observe is how long after the
	// restart retries are watched.
	P3Runtimes int
	P3Observe  time.Duration
	// P4Runtimes are Ready for P4Window, re-checked every P4Recheck.
	P4Runtimes int
	P4Window   time.Duration
	P4Recheck  time.Duration
	// OperationDuration is how long the simulator takes for a shoot operation.
	OperationDuration time.Duration
	// RunTimeout bounds every wait of this manager's runs for their Runtimes: past it a run
	// fails. BaselineCut bounds the baseline's waits: a baseline run that does not make it is
	// cut there and reported with what it reached, so that its 5 QPS do not set the length of
	// the benchmark.
	RunTimeout, BaselineCut time.Duration
	// BaselineLargeCut bounds the baseline's P1 runs beyond the smallest size: at 5 QPS they
	// cannot finish within a benchmark, and what they reach is a lower bound however long
	// they run.
	BaselineLargeCut time.Duration
	// Profile takes pprof CPU and heap profiles of this manager during P1 and P4.
	Profile bool
}

var (
	profileName      = flag.String("profile", "short", "short (a few Runtimes per scenario, for CI), full (make bench) or landscape (the landscape sizes, make bench-landscape)")
	outDir           = flag.String("out", "", "directory for README.md and the plots (default: the test's temporary directory)")
	keep             = flag.Bool("keep", false, "keep the work directory (logs of every process)")
	p1Sizes          = flag.String("p1-sizes", "", "comma-separated P1 sizes (overrides the profile)")
	p2Runtimes       = flag.Int("p2-runtimes", 0, "P2 runtimes in flight (overrides the profile)")
	p2Outage         = flag.Duration("p2-outage", 0, "P2 length of the outage (overrides the profile)")
	p3Runtimes       = flag.Int("p3-runtimes", 0, "P3 runtimes in backoff (overrides the profile)")
	p4Runtimes       = flag.Int("p4-runtimes", 0, "P4 Ready runtimes (overrides the profile)")
	p4Window         = flag.Duration("p4-window", 0, "P4 length of the quiet window per policy, with a re-check interval of half of it (overrides the profile)")
	p4Recheck        = flag.Duration("p4-recheck", 0, "P4 re-check interval (overrides the profile and -p4-window's half)")
	opDuration       = flag.Duration("operation-duration", 0, "simulator's shoot operation duration (overrides the profile)")
	runTimeout       = flag.Duration("run-timeout", 0, "longest wait of one run of this manager for its Runtimes (overrides the profile)")
	baselineCut      = flag.Duration("baseline-cut", 0, "longest wait of one baseline run, which is then cut (overrides the profile)")
	managerArgs      = flag.String("manager-args", "", "extra flags for this manager's runs, not the baseline's, separated by spaces (for tuning: -manager-args=--workers=50)")
	managerEnv       = flag.String("manager-env", "", "extra environment for this manager's runs, not the baseline's, separated by spaces (for diagnosis: -manager-env=GODEBUG=gctrace=1 writes each collection to the manager's log)")
	p4Scrape         = flag.Duration("p4-scrape-interval", 30*time.Second, "P4 reads each manager's /metrics this often, as a Prometheus would, so that its memory holds what a scrape costs (0: only at the window's start and end)")
	p4MemoryLimit    = flag.String("p4-memory-limit", "", "--memory-limit of this manager in P4 (a container's limit, say 150Mi); none by default")
	p4ContainerLimit = flag.String("p4-container-limit", "", "run this manager's P4 process in a memory cgroup with this limit (say 150Mi), as in a container, where it reads its limit itself; needs root and a cgroup memory controller. None by default")
	scenarios        = flag.String("scenarios", "p1,p2,p3,p4", "comma-separated scenarios to run; p4 needs p1, whose largest fleet it re-checks")
)

// selectedScenarios is the set -scenarios names.
func selectedScenarios() (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range strings.Split(*scenarios, ",") {
		name := strings.ToLower(strings.TrimSpace(f))
		switch name {
		case "p1", "p2", "p3", "p4":
			out[name] = true
		default:
			return nil, fmt.Errorf("-scenarios: unknown scenario %q: p1, p2, p3 or p4", f)
		}
	}
	if out["p4"] && !out["p1"] {
		return nil, fmt.Errorf("-scenarios: p4 re-checks the fleet p1 provisions; name p1 too")
	}
	return out, nil
}

// profiles are the shipped profiles. full fits `make bench` into 30 minutes on 2 cores; landscape
// has the landscape sizes (P1 at 5,000, P2 at 1,000 with 5 minutes, P3 at 500, P4 at 5,000 for
// 10 minutes), which the simulated landscape on one machine provisions at a few runtimes per
// second, see docs/benchmarks/README.md.
var profiles = map[string]profile{
	"short": {
		Name: "short", P1Sizes: []int{6}, P2Runtimes: 6, P2Outage: 20 * time.Second,
		P3Runtimes: 6, P3Observe: 20 * time.Second,
		P4Runtimes: 6, P4Window: 30 * time.Second, P4Recheck: 15 * time.Second,
		OperationDuration: 3 * time.Second, RunTimeout: 4 * time.Minute, BaselineCut: 4 * time.Minute, BaselineLargeCut: 4 * time.Minute,
	},
	"full": {
		Name: "full", P1Sizes: []int{100, 1000}, P2Runtimes: 200, P2Outage: 90 * time.Second,
		P3Runtimes: 150, P3Observe: 30 * time.Second,
		P4Runtimes: 1000, P4Window: 90 * time.Second, P4Recheck: 45 * time.Second,
		OperationDuration: 20 * time.Second, RunTimeout: 10 * time.Minute, BaselineCut: 4 * time.Minute, BaselineLargeCut: time.Minute,
		Profile: true,
	},
	// landscape is the landscape sizes; on 2 cores it takes well over an hour.
	"landscape": {
		Name: "landscape", P1Sizes: []int{100, 1000, 5000}, P2Runtimes: 1000, P2Outage: 5 * time.Minute,
		P3Runtimes: 500, P3Observe: 40 * time.Second,
		P4Runtimes: 5000, P4Window: 10 * time.Minute, P4Recheck: 5 * time.Minute,
		OperationDuration: 20 * time.Second, RunTimeout: 40 * time.Minute, BaselineCut: 6 * time.Minute, BaselineLargeCut: 2 * time.Minute,
		Profile: true,
	},
}

// selectedProfile is the -profile with the flags that override it.
func selectedProfile() (profile, error) {
	p, ok := profiles[*profileName]
	if !ok {
		return profile{}, fmt.Errorf("unknown -profile %q: short, full or landscape", *profileName)
	}
	if *p1Sizes != "" {
		p.P1Sizes = nil
		for _, f := range strings.Split(*p1Sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return profile{}, fmt.Errorf("-p1-sizes: %q is not a positive number", f)
			}
			p.P1Sizes = append(p.P1Sizes, n)
		}
	}
	override := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	overrideD := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	override(&p.P2Runtimes, *p2Runtimes)
	overrideD(&p.P2Outage, *p2Outage)
	override(&p.P3Runtimes, *p3Runtimes)
	override(&p.P4Runtimes, *p4Runtimes)
	if *p4Window > 0 {
		p.P4Window, p.P4Recheck = *p4Window, *p4Window/2
	}
	overrideD(&p.P4Recheck, *p4Recheck)
	overrideD(&p.OperationDuration, *opDuration)
	overrideD(&p.RunTimeout, *runTimeout)
	overrideD(&p.BaselineCut, *baselineCut)
	return p, nil
}

// largestP1 is the size of the largest provisioning run.
func (p profile) largestP1() int {
	n := 0
	for _, s := range p.P1Sizes {
		n = max(n, s)
	}
	return n
}

// timeout is how long a run of the policy waits for its Runtimes.
func (p profile) timeout(pol policy) time.Duration {
	if pol == baseline {
		return p.BaselineCut
	}
	return p.RunTimeout
}

// p1Timeout is how long a P1 run of n Runtimes waits for them.
func (p profile) p1Timeout(pol policy, n int) time.Duration {
	if pol == baseline && n > slices.Min(p.P1Sizes) {
		return min(p.BaselineCut, p.BaselineLargeCut)
	}
	return p.timeout(pol)
}
