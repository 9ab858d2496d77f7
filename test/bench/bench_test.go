package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// results are everything a benchmark run measured.
type results struct {
	profile profile
	started time.Time
	took    time.Duration
	p1      []p1Result
	p2      []p2Result
	p3      []p3Result
	p4      []p4Result
	// footprint is the heap per cached object of each kind, measured on P4's fleet.
	footprint []kindFootprint
	// profiles are the pprof summaries of this manager, by title.
	profiles []profileSummary
}

// TestBench runs every scenario with both policies and writes the report. It checks that each
// run measured what it is about (every count it reports comes from the run) and leaves the
// targets to the report: timings on a shared machine are numbers to compare, not assertions.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("bench: skipped with -short: it builds and runs the manager, the simulator and two API servers")
	}
	p, err := selectedProfile()
	if err != nil {
		t.Fatal(err)
	}
	want, err := selectedScenarios()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if *keep {
		if dir, err = os.MkdirTemp("", "bench-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("bench: work directory %s is kept", dir)
	}
	if err := os.MkdirAll(profileDir(dir), 0o750); err != nil {
		t.Fatal(err)
	}
	out := *outDir
	if out == "" {
		out = filepath.Join(dir, "report")
	} else if !filepath.IsAbs(out) {
		out = filepath.Join(testenv.RepoRoot(), out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// controller-runtime's clients and caches of this process log into the work directory.
	clientLog, err := os.Create(filepath.Join(dir, "bench-clients.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = clientLog.Close() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(clientLog)))

	plan := newPlan(p)
	s, err := startStack(ctx, dir, p, plan.projects())
	t.Cleanup(func() {
		if s != nil {
			if err := s.stop(); err != nil {
				t.Logf("bench: stop: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("bench: start: %v", err)
	}
	res := &results{profile: p, started: time.Now()}
	// A scenario that fails ends the test; the report still shows what the runs before it
	// measured.
	defer func() {
		if t.Failed() && res.took == 0 {
			res.took = time.Since(res.started)
			if err := writeReport(out, res); err != nil {
				t.Logf("bench: partial report: %v", err)
			} else {
				t.Logf("bench: partial report in %s", out)
			}
		}
	}()
	t.Logf("bench: profile %s: P1 %v, P2 %d for %s, P3 %d, P4 %d for %s; operation duration %s",
		p.Name, p.P1Sizes, p.P2Runtimes, p.P2Outage, p.P3Runtimes, p.P4Runtimes, p.P4Window, p.OperationDuration)

	var fleet run
	for _, n := range p.P1Sizes {
		if !want["p1"] {
			break
		}
		for _, pol := range []policy{ours, baseline} {
			r := plan.p1[n][pol]
			prof := ""
			if p.Profile && pol == ours && n == p.largestP1() {
				prof = fmt.Sprintf("p1-%d-cpu.pb.gz", n)
			}
			got, err := s.runP1(ctx, p, r, n, prof)
			if err != nil {
				t.Fatalf("P1 %s N=%d: %v", pol, n, err)
			}
			t.Logf("P1 %-22s N=%-5d Ready %d in %s (complete %t), Gardener requests %d (%.1f per runtime, writes %.1f)",
				pol, n, got.readyCount(), got.elapsed.Round(time.Second), got.complete, got.requests.total,
				perRuntime(got.requests.total, n), perRuntime(got.requests.writes, n))
			// A baseline run cut before its first Ready still measured its requests.
			checkMeasured(t, "P1 "+string(pol), got.requests.writes > 0 && (got.readyCount() > 0 || pol == baseline),
				"no Runtime became Ready or no Gardener write was seen")
			if pol == ours && !got.complete {
				t.Errorf("P1 %s N=%d: only %d Ready within %s", pol, n, got.readyCount(), p.p1Timeout(pol, n))
			}
			res.p1 = append(res.p1, got)
			if pol == ours && n == p.largestP1() {
				fleet = r
			}
		}
	}

	if want["p4"] {
		if err := s.extendFleet(ctx, p, fleet, p.largestP1(), p.P4Runtimes); err != nil {
			t.Fatalf("P4 fleet: %v", err)
		}
		fp, err := s.cacheFootprint(ctx, fleet)
		if err != nil {
			t.Fatalf("P4 footprint: %v", err)
		}
		for _, f := range fp {
			t.Logf("P4 footprint %-18s %5d objects: %6.0f bytes decoded, %6.0f cached", f.kind, f.objects, f.decoded, f.cached)
			// The rest of the process allocates too while the copies are weighed: a transform
			// that drops nothing of a kind (garden ConfigMaps carry few managedFields) may weigh a
			// little more than the decoded copies. Past 2% it grew them.
			checkMeasured(t, "P4 footprint "+f.kind, f.cached > 0 && f.cached <= 1.02*f.decoded, "no heap was measured, or the transform grew the objects")
		}
		res.footprint = fp
	}
	for _, pol := range []policy{ours, baseline} {
		if !want["p4"] {
			break
		}
		r := fleet
		r.policy = pol
		got, err := s.runP4(ctx, p, r, p.P4Runtimes, p.Profile && pol == ours)
		if err != nil {
			t.Fatalf("P4 %s: %v", pol, err)
		}
		t.Logf("P4 %-22s N=%d window %s: re-checks %d, peak RSS %.0f MiB (high-water mark %.0f MiB), CPU %.2f s/min, Gardener %d (writes %d: %s), runtime clusters %d reads %d writes, control plane %d reads %d writes (%s)",
			pol, got.n, got.window, got.rechecks, mib(got.peakRSS), mib(got.hwm), got.cpuPerMinute, got.gardener.total, got.gardener.writes,
			countsText(got.gardenerByKind), got.runtimeReads, got.runtimeWrites, got.cpReads, got.cpWrite, countsText(got.clientByMethod))
		t.Logf("P4 %-22s memory at the window's end: Go runtime holds %.1f MiB of %.1f MiB anonymous (%s), live heap %.1f MiB after a forced collection, next collection at %.1f MiB",
			pol, mib(got.atEnd.held()), mib(got.atEndAnon), got.atEnd.heldText(), mib(got.liveHeap), mib(got.atEnd.NextGC))
		t.Logf("P4 %-22s scrapes of /metrics from the start: %d, the last %d bytes", pol, got.scrapes.count, got.scrapes.size)
		if c := got.container; c != nil {
			t.Logf("P4 %-22s in a cgroup limited to %.0f MiB: window end usage %.1f MiB (working set %.1f), peak %.1f MiB; limit met %d times before the window and %d in it; OOM kills %d; major faults %d before the window, %d in it",
				pol, mib(c.limit), mib(c.window.usage), mib(c.window.workingSet), mib(c.window.peak), c.first.limitHits, c.window.limitHits-c.first.limitHits, c.window.oomKills, c.firstFaults, c.windowFaults)
		}
		f := got.restart
		t.Logf("P4 %-22s first interval %s: re-checks %d, CPU %.1f s, peak RSS %.0f MiB (high-water mark %.0f MiB, reached by %s), Gardener %d (writes %d: %s), the manager's clients %s",
			pol, f.length.Round(time.Second), f.rechecks, f.cpu.Seconds(), mib(f.peakRSS), mib(f.hwm), f.hwmAt.Round(time.Second), f.gardener.total, f.gardener.writes, countsText(f.gardenerByKind),
			countsText(f.clientByMethod))
		checkMeasured(t, "P4 "+string(pol)+" first interval", f.rechecks > 0 && f.peakRSS > 0, "no first re-check ran before the window or no RSS was read")
		checkMeasured(t, "P4 "+string(pol), got.rechecks > 0 && got.peakRSS > 0, "no re-check ran in the window or no RSS was read")
		checkMeasured(t, "P4 "+string(pol)+" high-water mark", f.hwm > 0 && got.hwm > 0, "VmHWM was not read, or it could not be reset at the window's start")
		checkMeasured(t, "P4 "+string(pol)+" scrapes", *p4Scrape <= 0 || got.scrapes.count > 0, "the manager's metrics were never scraped")
		checkMeasured(t, "P4 "+string(pol)+" memory", got.liveHeap > 0 && got.atEnd.held() > 0, "no Go memory statistics were read")
		res.p4 = append(res.p4, got)
	}

	for _, pol := range []policy{ours, baseline} {
		if !want["p2"] {
			break
		}
		got, err := s.runP2(ctx, p, plan.p2[pol])
		if err != nil {
			t.Fatalf("P2 %s: %v", pol, err)
		}
		t.Logf("P2 %-22s N=%d outage %s: peak %.1f/s (10s %.1f/s), mean %.2f/s during; peak %.1f/s mean %.2f/s after; Failed %d; per-runtime alerts %v; shared %v; all Ready %t, %s after recovery",
			pol, got.n, got.outage, got.peakDuring, got.peak10During, got.meanDuring, got.peakAfter, got.meanAfter, got.failed,
			got.runtimeAlerts, got.sharedAlerts, got.recovered, got.recovery.Round(time.Second))
		// This manager's breaker probes Gardener throughout an outage; the baseline polls every
		// 60s, and a short outage may see none of its requests.
		checkMeasured(t, "P2 "+string(pol), len(got.rate) > int(p.P2Outage.Seconds()) && (got.meanDuring > 0 || pol == baseline) && got.readyAt > 0,
			"no Gardener request was seen during the outage, or no Runtime was Ready after it")
		if pol == ours && !got.recovered {
			t.Errorf("P2 %s: %d of %d Ready within %s after the outage", pol, got.readyAt, got.n, p.timeout(pol))
		}
		res.p2 = append(res.p2, got)
	}

	for _, pol := range []policy{ours, baseline} {
		if !want["p3"] {
			break
		}
		got, err := s.runP3(ctx, p, plan.p3[pol])
		if err != nil {
			t.Fatalf("P3 %s: %v", pol, err)
		}
		t.Logf("P3 %-22s N=%d: in backoff %d; first 10s %d Gardener requests; retried %d within %s, %d before their persisted time",
			pol, got.n, got.inBackoff, got.first10s.total, got.retried, got.observe, got.early)
		checkMeasured(t, "P3 "+string(pol), (got.inBackoff == got.n || pol == baseline) && got.first10s.total > 0, "not every Runtime was in backoff, or no request followed the restart")
		res.p3 = append(res.p3, got)
	}

	if err := s.log.problem(); err != nil {
		t.Errorf("bench: request log: %v", err)
	}
	if p.Profile {
		res.profiles = summarizeProfiles(ctx, t, dir, s.managerBin)
	}
	res.took = time.Since(res.started)
	if err := writeReport(out, res); err != nil {
		t.Fatalf("bench: report: %v", err)
	}
	for _, f := range []string{"README.md", "p1-time-to-ready.png", "p2-request-rate.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("bench: report file %s missing or empty: %v", f, err)
		}
	}
	t.Logf("bench: report in %s (%s)", out, res.took.Round(time.Second))
}

// checkMeasured fails the test when a run did not measure what it is about: a harness broken,
// not a slow machine.
func checkMeasured(t *testing.T, what string, ok bool, msg string) {
	t.Helper()
	if !ok {
		t.Errorf("%s: %s", what, msg)
	}
}

// plan names the runs: one Gardener project and control-plane namespace each.
type plan struct {
	p1     map[int]map[policy]run
	p2, p3 map[policy]run
}

func newPlan(p profile) plan {
	pl := plan{p1: map[int]map[policy]run{}, p2: map[policy]run{}, p3: map[policy]run{}}
	for _, n := range p.P1Sizes {
		pl.p1[n] = map[policy]run{}
		for _, pol := range []policy{ours, baseline} {
			pl.p1[n][pol] = run{scenario: "P1", policy: pol, name: fmt.Sprintf("p1%c%d", pol.short()[0], n)}
		}
	}
	for _, pol := range []policy{ours, baseline} {
		pl.p2[pol] = run{scenario: "P2", policy: pol, name: fmt.Sprintf("p2%c", pol.short()[0])}
		pl.p3[pol] = run{scenario: "P3", policy: pol, name: fmt.Sprintf("p3%c", pol.short()[0])}
	}
	return pl
}

// projects are the Gardener projects of every run.
func (pl plan) projects() []string {
	var out []string
	for _, byPolicy := range pl.p1 {
		for _, r := range byPolicy {
			out = append(out, r.name)
		}
	}
	for _, r := range []map[policy]run{pl.p2, pl.p3} {
		for _, x := range r {
			out = append(out, x.name)
		}
	}
	return out
}

// extendFleet grows this manager's largest P1 fleet to n Ready Runtimes for P4, with a manager
// whose Gardener rate limit is no bottleneck: the fleet is the setting, not the measurement.
func (s *suite) extendFleet(ctx context.Context, p profile, fleet run, have, n int) error {
	if n <= have {
		return nil
	}
	runtimes, err := generate(fleet, have, n-have)
	if err != nil {
		return err
	}
	t, err := s.track(ctx, fleet.name)
	if err != nil {
		return err
	}
	defer t.stop()
	m, err := s.startManager(ctx, fleet, "--gardener-qps", "500", "--gardener-burst", "500")
	if err != nil {
		return err
	}
	defer func() { _ = m.stop() }()
	if err := s.create(ctx, runtimes); err != nil {
		return err
	}
	timeout := p.RunTimeout + time.Duration(n-have)*100*time.Millisecond
	if ok, _ := t.waitFor(ctx, n, timeout, isReady); !ok {
		return fmt.Errorf("%d of %d Runtimes Ready within %s", t.readyNow(), n, timeout)
	}
	return nil
}

// profileDir holds the pprof profiles of a run.
func profileDir(dir string) string { return filepath.Join(dir, "profiles") }

// runtimeController is the controller whose steps P4 counts.
var runtimeController = runtimectrl.ControllerName
