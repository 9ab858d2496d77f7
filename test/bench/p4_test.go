package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
)

// p4Result is one quiet-fleet window.
type p4Result struct {
	policy  policy
	n       int
	window  time.Duration
	recheck time.Duration
	// rechecks counts the re-checks of Ready Runtimes that began in the window (runs of the
	// start step).
	rechecks int
	// peakRSS is the largest resident set size seen, in bytes; cpuPerMinute the CPU seconds the
	// manager used per minute of the window.
	peakRSS int64
	// peakAnon and peakFile split peakRSS: anonymous memory (heap, stacks) and the pages of
	// files, nearly all the executable's.
	peakAnon, peakFile int64
	// hwm is the kernel's high-water mark of the resident set in the window (VmHWM, reset at its
	// start), which also holds the peaks between two samples; zero when it could not be reset.
	hwm          int64
	cpuPerMinute float64
	// Requests in the window: those that reached Gardener (the simulator's log), and the
	// manager's own count of its requests to the runtime clusters and to the control plane.
	gardener                                      requestCount
	runtimeReads, runtimeWrites, cpReads, cpWrite int
	// gardenerByKind and clientByMethod break the requests down: Gardener's by verb and
	// resource, the manager's own by cluster and method.
	gardenerByKind, clientByMethod map[string]int
	// notReady counts Runtimes that were not Ready at the end.
	notReady int
	// atEnd is the Go runtime's account of the manager's memory at the window's end, with the
	// anonymous memory the kernel counted at that moment; liveHeap the heap that a forced
	// collection right after it left.
	atEnd       goMemory
	atEndAnon   int64
	liveHeap    int64
	memoryKnown bool
	// restart is what the process did before the window: its start and its first re-check of
	// each Runtime.
	restart p4Restart
	// container is the kernel's account of the memory cgroup this manager ran in
	// (-p4-container-limit); nil when it ran without one.
	container *p4Container
	// scrapes are the reads of the manager's /metrics from its start to the window's end, as a
	// Prometheus would make them.
	scrapes scraper
}

// scraper reads a manager's /metrics every interval, as the Prometheus that watches it would:
// each scrape builds the series of every Runtime and GardenerCluster, so P4's memory figures
// hold what a scrape costs.
type scraper struct {
	every time.Duration
	last  time.Time
	// count is how many scrapes it made; size the bytes of the last reply, decompressed (Go's
	// client asks for gzip, as a Prometheus does, so the manager compresses it all the same).
	count, size int
}

// due scrapes m when the interval has passed since the last scrape.
func (s *scraper) due(ctx context.Context, m *managerProc) error {
	if s.every <= 0 || time.Since(s.last) < s.every {
		return nil
	}
	body, err := httpBody(ctx, "http://"+m.metrics+"/metrics", 10*time.Second)
	if err != nil {
		return fmt.Errorf("scrape: %w", err)
	}
	s.last, s.count, s.size = time.Now(), s.count+1, len(body)
	return nil
}

// p4Restart is a new process's first interval: from its start, through its cache's first list
// and the first re-check of every Runtime (spread over one interval from the start, by uid),
// to the window.
type p4Restart struct {
	length   time.Duration
	rechecks int
	cpu      time.Duration
	// peakRSS is the largest resident set size seen in it, in bytes, read every 2 seconds;
	// peakAnon and peakFile split it as in p4Result, and peakAt is when it came after the start.
	peakRSS, peakAnon, peakFile int64
	peakAt                      time.Duration
	// hwm is the kernel's high-water mark of the resident set from the start to the window
	// (VmHWM), which also holds the peaks between two samples; hwmAt is the first sample that
	// saw it, so the peak came in the 2 seconds before.
	hwm      int64
	hwmAt    time.Duration
	gardener requestCount
	// gardenerByKind breaks Gardener's requests down by verb and resource; clientByMethod the
	// manager's own, by cluster and method, as in p4Result.
	gardenerByKind, clientByMethod map[string]int
}

// p4Container is what the kernel counted for a manager that ran in a memory cgroup with a
// container's limit: in the window (peak reset at its start on cgroup v1) and in the first
// interval.
type p4Container struct {
	limit int64
	v2    bool
	// first is read at the window's start, window at its end; window.limitHits counts from the
	// start of the process, as oomKills do.
	first, window cgroupReading
	// firstFaults and windowFaults are the process's major page faults before the window and in
	// it.
	firstFaults, windowFaults int64
}

// recheckStep is the step a re-check of a Ready Runtime starts from.
const recheckStep = "Initialise"

// runP4 starts a manager on the Ready fleet of run r and measures a window in which every
// Runtime is re-checked at least once (--runtime-recheck-interval is half of it). The window
// begins one interval after the start, once the process has re-checked every Runtime for the
// first time: a first re-check reads the shoot from Gardener, which later ones do not, so the
// window holds the re-checks of a quiet fleet and the first interval is reported on its own
// (p4Restart).
func (s *suite) runP4(ctx context.Context, p profile, r run, n int, prof bool) (p4Result, error) {
	res := p4Result{policy: r.policy, n: n, window: p.P4Window, recheck: p.P4Recheck}
	t, err := s.track(ctx, r.name)
	if err != nil {
		return res, err
	}
	defer t.stop()
	args := []string{"--runtime-recheck-interval", p.P4Recheck.String()}
	if *p4MemoryLimit != "" && r.policy != baseline {
		args = append(args, "--memory-limit", *p4MemoryLimit)
	}
	var cg *memoryCgroup
	if *p4ContainerLimit != "" && r.policy != baseline {
		if cg, err = newMemoryCgroup("infrastructure-manager-bench-"+r.name, *p4ContainerLimit); err != nil {
			return res, err
		}
		res.container = &p4Container{limit: cg.limit, v2: cg.v2}
	}
	started := time.Now()
	m, err := s.startManagerIn(ctx, r, cg, args...)
	if err != nil {
		if cg != nil {
			_ = cg.remove()
		}
		return res, err
	}
	defer func() { _ = m.stop() }()
	res.scrapes.every = *p4Scrape
	if ok, _ := t.waitFor(ctx, n, p.RunTimeout, isReady); !ok {
		return res, fmt.Errorf("%s: %d of %d Runtimes Ready before the quiet window", r.name, t.readyNow(), n)
	}
	// The first re-checks are due within one interval of the engine's start, which comes a
	// little after the process's; the margin covers that.
	windowStart := started.Add(p.P4Recheck + restartMargin)
	for time.Now().Before(windowStart) {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(min(2*time.Second, time.Until(windowStart))):
		}
		if err := res.scrapes.due(ctx, m); err != nil {
			return res, err
		}
		u, err := m.readUsage()
		if err != nil {
			return res, err
		}
		if u.rss > res.restart.peakRSS {
			res.restart.peakRSS, res.restart.peakAnon, res.restart.peakFile = u.rss, u.anon, u.file
			res.restart.peakAt = time.Since(started)
		}
		if u.hwm > res.restart.hwm {
			res.restart.hwm, res.restart.hwmAt = u.hwm, time.Since(started)
		}
	}
	before, err := m.scrape(ctx)
	if err != nil {
		return res, err
	}
	u0, err := m.readUsage()
	if err != nil {
		return res, err
	}
	start := time.Now()
	profDone := make(chan error, 2)
	if prof {
		secs := int(min(p.P4Window, time.Minute).Seconds())
		go func() {
			profDone <- m.profileTo(ctx, fmt.Sprintf("profile?seconds=%d", secs), filepath.Join(profileDir(s.dir), "p4-cpu.pb.gz"), time.Duration(secs+30)*time.Second)
		}()
		// The heap endpoint with seconds answers with what was allocated in those seconds:
		// what keeps the collector busy.
		go func() {
			profDone <- m.profileTo(ctx, fmt.Sprintf("heap?seconds=%d", secs), filepath.Join(profileDir(s.dir), "p4-allocs.pb.gz"), time.Duration(secs+30)*time.Second)
		}()
	} else {
		profDone <- nil
		profDone <- nil
	}
	res.peakRSS, res.peakAnon, res.peakFile = u0.rss, u0.anon, u0.file
	if u0.hwm > res.restart.hwm {
		res.restart.hwm, res.restart.hwmAt = u0.hwm, time.Since(started)
	}
	// The window's high-water mark starts here; without it, the samples are all there is.
	hwmReset := m.resetPeak() == nil
	if c := res.container; c != nil {
		if c.first, err = cg.read(); err != nil {
			return res, err
		}
		c.firstFaults = u0.majorFaults
		if err := cg.resetPeak(); err != nil {
			return res, err
		}
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for time.Since(start) < p.P4Window {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
		if err := res.scrapes.due(ctx, m); err != nil {
			return res, err
		}
		u, err := m.readUsage()
		if err != nil {
			return res, err
		}
		if u.rss > res.peakRSS {
			res.peakRSS, res.peakAnon, res.peakFile = u.rss, u.anon, u.file
		}
	}
	u1, err := m.readUsage()
	if err != nil {
		return res, err
	}
	if hwmReset {
		res.hwm = u1.hwm
	}
	if c := res.container; c != nil {
		if c.window, err = cg.read(); err != nil {
			return res, err
		}
		c.windowFaults = u1.majorFaults - u0.majorFaults
	}
	if err := res.readMemory(ctx, m, u1); err != nil {
		return res, err
	}
	after, err := m.scrape(ctx)
	if err != nil {
		return res, err
	}
	end := time.Now()
	minutes := end.Sub(start).Minutes()
	res.cpuPerMinute = (u1.cpu - u0.cpu).Seconds() / minutes
	if err := s.log.sync(ctx); err != nil {
		return res, err
	}
	records := s.log.between(start, end)
	res.gardener, res.gardenerByKind = countRequests(records), requestsByKind(records)
	firstRecords := s.log.between(started, start)
	res.restart.length, res.restart.cpu = start.Sub(started), u0.cpu
	res.restart.gardener, res.restart.gardenerByKind = countRequests(firstRecords), requestsByKind(firstRecords)
	delta := func(family string, match func(map[string]string) bool) int {
		return int(sum(after, family, match) - sum(before, family, match))
	}
	isRecheck := func(l map[string]string) bool {
		return l["step"] == recheckStep && l["controller"] == runtimeController
	}
	res.rechecks = delta("infrastructure_manager_fsm_step_duration_seconds", isRecheck)
	res.restart.rechecks = int(sum(before, "infrastructure_manager_fsm_step_duration_seconds", isRecheck))
	cpHost := hostOf(s.cpConfig.Host)
	isWrite := func(l map[string]string) bool { return l["method"] != "GET" }
	runtimeHost := func(l map[string]string) bool { return l["host"] != cpHost && l["host"] != s.gardenHost }
	res.runtimeWrites = delta("rest_client_requests_total", func(l map[string]string) bool { return runtimeHost(l) && isWrite(l) })
	res.runtimeReads = delta("rest_client_requests_total", func(l map[string]string) bool { return runtimeHost(l) && !isWrite(l) })
	res.cpWrite = delta("rest_client_requests_total", func(l map[string]string) bool { return l["host"] == cpHost && isWrite(l) })
	res.cpReads = delta("rest_client_requests_total", func(l map[string]string) bool { return l["host"] == cpHost && !isWrite(l) })
	res.clientByMethod = s.clientRequests(after, delta)
	// The scrape at the window's start counts from the process's start: the first interval.
	res.restart.clientByMethod = s.clientRequests(before, func(family string, match func(map[string]string) bool) int {
		return int(sum(before, family, match))
	})
	if prof {
		if err := m.profileTo(ctx, "heap", filepath.Join(profileDir(s.dir), "p4-heap.pb.gz"), 30*time.Second); err != nil {
			return res, fmt.Errorf("heap profile: %w", err)
		}
	}
	for range 2 {
		if err := <-profDone; err != nil {
			return res, fmt.Errorf("profile of the window: %w", err)
		}
	}
	res.notReady = n - t.readyNow()
	return res, nil
}

// clientRequests breaks the manager's own requests down by cluster and method (control plane,
// Gardener, runtime cluster), counting with count: the hosts are those of the scrape m.
func (s *suite) clientRequests(m map[string]*dto.MetricFamily, count func(family string, match func(map[string]string) bool) int) map[string]int {
	cpHost := hostOf(s.cpConfig.Host)
	out := map[string]int{}
	for _, host := range metricHosts(m) {
		cluster := "runtime cluster"
		switch host {
		case cpHost:
			cluster = "control plane"
		case s.gardenHost:
			cluster = "Gardener"
		}
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if n := count("rest_client_requests_total", func(l map[string]string) bool { return l["host"] == host && l["method"] == method }); n > 0 {
				out[cluster+" "+method] += n
			}
		}
	}
	return out
}

// restartMargin is how long after one re-check interval from the manager's start P4's window
// begins.
const restartMargin = 5 * time.Second

// requestsByKind counts Gardener's requests by verb and resource.
func requestsByKind(records []proxy.RequestRecord) map[string]int {
	out := map[string]int{}
	for _, rec := range records {
		kind := rec.Resource
		if rec.Subresource != "" {
			kind += "/" + rec.Subresource
		}
		out[rec.Verb+" "+kind]++
	}
	return out
}

// readMemory reads the manager's Go memory at the window's end (beside u, read just before),
// then the heap a forced collection leaves: the live heap, which the sampled heap profile can
// only estimate.
func (res *p4Result) readMemory(ctx context.Context, m *managerProc, u usage) error {
	now, err := m.goMemory(ctx, false)
	if err != nil {
		return err
	}
	collected, err := m.goMemory(ctx, true)
	if err != nil {
		return err
	}
	res.atEnd, res.atEndAnon, res.liveHeap, res.memoryKnown = now, u.anon, collected.HeapAlloc, true
	return nil
}

// metricHosts lists the hosts of the manager's client requests.
func metricHosts(families map[string]*dto.MetricFamily) []string {
	var hosts []string
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "host" && !slices.Contains(hosts, l.GetValue()) {
				hosts = append(hosts, l.GetValue())
			}
		}
	}
	return hosts
}
