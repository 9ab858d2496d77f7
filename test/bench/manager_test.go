package bench_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// policy is the requeue policy a manager process runs with.
type policy string

const (
	// ours is this manager as shipped.
	ours policy = "this manager"
	// baseline requeues as the upstream manager does (the command in test/bench/baseline).
	baseline policy = "upstream-like baseline"
)

// short names the policy in file names and tables.
func (p policy) short() string {
	if p == baseline {
		return "baseline"
	}
	return "ours"
}

// qps is the policy's Gardener rate limit (the manager's default, or the baseline's 5).
func (p policy) qps() float64 {
	if p == baseline {
		return 5
	}
	return 20
}

// run is one scenario run: a Gardener project and a control-plane namespace of its own.
type run struct {
	scenario string
	policy   policy
	// name is the run's project and namespace, short because Gardener bounds project names.
	name string
}

// managerProc is one manager process of a run.
type managerProc struct {
	proc           *subprocess.Process
	metrics, pprof string
	// cgroup is the memory cgroup the process runs in; nil when it runs in the bench's.
	cgroup *memoryCgroup
}

// startManager starts a manager for r and waits until it serves its readiness probe.
func (s *suite) startManager(ctx context.Context, r run, extra ...string) (*managerProc, error) {
	return s.startManagerIn(ctx, r, nil, extra...)
}

// startManagerIn starts a manager for r as startManager does, in the memory cgroup cg when it is
// not nil. The executable's pages are dropped from the page cache first, so that the process
// reads them in again and they are charged to cg, as a container's are.
func (s *suite) startManagerIn(ctx context.Context, r run, cg *memoryCgroup, extra ...string) (*managerProc, error) {
	m := &managerProc{cgroup: cg}
	var probe string
	for _, addr := range []*string{&m.metrics, &m.pprof, &probe} {
		var err error
		if *addr, err = subprocess.LoopbackAddress(0); err != nil {
			return nil, err
		}
	}
	args := []string{
		"--gardener-kubeconfig", s.gardenKubeconfig,
		"--gardener-project", r.name,
		"--namespace", r.name,
		"--metrics-bind-address", m.metrics,
		"--metrics-secure=false",
		"--health-probe-bind-address", probe,
		"--pprof-bind-address", m.pprof,
	}
	args = append(args, extra...)
	if r.policy != baseline {
		args = append(args, strings.Fields(*managerArgs)...)
	}
	env := []string{"KUBECONFIG=" + s.cpKubeconfig, "POD_NAMESPACE=" + r.name}
	if r.policy != baseline {
		env = append(env, strings.Fields(*managerEnv)...)
	}
	name, bin := "manager-"+r.name, s.managerBin
	if r.policy == baseline {
		bin = s.baselineBin
	}
	if cg != nil {
		if err := uncache(bin); err != nil {
			return nil, err
		}
		bin, args = cg.command(bin, args)
	}
	var err error
	m.proc, err = subprocess.Start(name, subprocess.Options{Log: filepath.Join(s.dir, name+".log"), Env: env}, bin, args...)
	if err != nil {
		return nil, err
	}
	if err := m.proc.WaitHTTP(ctx, "http://"+probe+"/readyz", 2*time.Minute); err != nil {
		_ = m.proc.Kill()
		return nil, fmt.Errorf("%s not ready: %w\n%s", name, err, m.proc.LogTail(20))
	}
	return m, nil
}

// stop ends the manager with SIGTERM, and removes its cgroup.
func (m *managerProc) stop() error {
	err := m.proc.Stop(30 * time.Second)
	if m.cgroup != nil {
		err = errors.Join(err, m.cgroup.remove())
	}
	return err
}

// usage is a reading of the manager's memory and CPU time from /proc.
type usage struct {
	at  time.Time
	rss int64 // bytes
	// anon and file split rss: the heap, stacks and other private memory, and the pages of the
	// executable and other files mapped.
	anon, file int64
	// hwm is the largest rss since the process started or since resetPeak (VmHWM): the
	// kernel's own account, which also holds the peaks between two samples.
	hwm int64
	cpu time.Duration
	// majorFaults counts the page faults that had to read from a file (the executable's pages
	// that the kernel had dropped) since the process started.
	majorFaults int64
}

// resetPeak starts the process's VmHWM afresh at its current resident set size (proc(5):
// writing 5 to /proc/<pid>/clear_refs).
func (m *managerProc) resetPeak() error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", m.proc.PID()), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the manager's peak RSS: %w", err)
	}
	return nil
}

// readUsage reads /proc/<pid>/status (VmRSS, its split and VmHWM) and /proc/<pid>/stat
// (utime and stime).
func (m *managerProc) readUsage() (usage, error) {
	u := usage{at: time.Now()}
	pid := m.proc.PID()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, fmt.Errorf("manager status: %w%s", err, m.oomKilled())
	}
	fields := map[string]*int64{"VmRSS:": &u.rss, "RssAnon:": &u.anon, "RssFile:": &u.file, "VmHWM:": &u.hwm}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || fields[f[0]] == nil {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return u, fmt.Errorf("%s %q: %w", f[0], line, err)
		}
		*fields[f[0]] = kb << 10
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, fmt.Errorf("manager stat: %w", err)
	}
	// The command name, in parentheses, may hold spaces: the fields that count follow it.
	rest := string(stat)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	// After the name: state is field 3 of the line, majflt 12, utime 14 and stime 15, in clock
	// ticks of 1/100 s (USER_HZ on Linux).
	if len(f) < 13 {
		return u, fmt.Errorf("manager stat: %d fields", len(f))
	}
	if u.majorFaults, err = strconv.ParseInt(f[9], 10, 64); err != nil {
		return u, fmt.Errorf("manager stat: %w", err)
	}
	ticks := int64(0)
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return u, fmt.Errorf("manager stat: %w", err)
		}
		ticks += n
	}
	u.cpu = time.Duration(ticks) * 10 * time.Millisecond
	return u, nil
}

// oomKilled says, for an error about a process that is gone, whether its cgroup's OOM killer
// killed it.
func (m *managerProc) oomKilled() string {
	if m.cgroup == nil {
		return ""
	}
	if r, err := m.cgroup.read(); err == nil && r.oomKills > 0 {
		return fmt.Sprintf(" (the OOM killer of its cgroup, limit %.0f MiB, killed %d processes)", mib(m.cgroup.limit), r.oomKills)
	}
	return ""
}

// scrape reads the manager's metrics.
func (m *managerProc) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	body, err := httpBody(ctx, "http://"+m.metrics+"/metrics", 10*time.Second)
	if err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return families, nil
}

// sum adds the values of the counters (or histogram counts) of family whose labels match.
func sum(families map[string]*dto.MetricFamily, family string, match func(labels map[string]string) bool) float64 {
	f := families[family]
	if f == nil {
		return 0
	}
	total := 0.0
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if match != nil && !match(labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		}
	}
	return total
}

// profileTo saves a pprof profile of the manager (path like "profile?seconds=30" or "heap").
func (m *managerProc) profileTo(ctx context.Context, path, file string, timeout time.Duration) error {
	body, err := httpBody(ctx, "http://"+m.pprof+"/debug/pprof/"+path, timeout)
	if err != nil {
		return err
	}
	return os.WriteFile(file, body, 0o644)
}

// goMemory is the Go runtime's account of a process's memory: the fields of runtime.MemStats
// that pprof's heap endpoint prints with debug=1, in bytes.
type goMemory struct {
	// HeapAlloc is the heap's live objects and the garbage not yet swept.
	HeapAlloc int64
	// Sys is all the memory the runtime has mapped; HeapReleased the part of it returned to
	// the kernel. Sys less HeapReleased is what the runtime's memory limit bounds.
	Sys, HeapReleased int64
	// NextGC is the heap size at which the next collection ends.
	NextGC int64
	// HeapInuse is the heap's spans that hold objects, HeapIdle those that hold none (the
	// released ones among them).
	HeapInuse, HeapIdle int64
	// The memory beside the heap, as mapped: goroutine stacks, the runtime's span structures
	// (MSpan and MCache), the collector's metadata (GCSys), the profiler's buckets and the
	// rest of the runtime's own (OtherSys).
	StackSys, MSpanSys, MCacheSys, GCSys, BuckHashSys, OtherSys int64
}

// held is the memory the runtime holds: what its memory limit bounds.
func (g goMemory) held() int64 { return g.Sys - g.HeapReleased }

// heldParts splits held into its parts, which add up to it: the heap's objects (live and not
// yet swept), the unused room in spans that hold objects, free spans not returned to the
// kernel, stacks, the collector's metadata, and the rest of the runtime's own.
func (g goMemory) heldParts() (objects, spanRoom, free, stacks, gc, other int64) {
	return g.HeapAlloc, g.HeapInuse - g.HeapAlloc, g.HeapIdle - g.HeapReleased, g.StackSys, g.GCSys,
		g.MSpanSys + g.MCacheSys + g.BuckHashSys + g.OtherSys
}

// heldText is heldParts in words, in MiB.
func (g goMemory) heldText() string {
	objects, room, free, stacks, gc, other := g.heldParts()
	return fmt.Sprintf("heap objects %.1f, room in their spans %.1f, free spans kept %.1f, stacks %.1f, collector metadata %.1f, other runtime structures %.1f",
		mib(objects), mib(room), mib(free), mib(stacks), mib(gc), mib(other))
}

// goMemory reads the Go runtime's memory statistics of the manager; collect runs a collection
// first, so that HeapAlloc is the live heap.
func (m *managerProc) goMemory(ctx context.Context, collect bool) (goMemory, error) {
	path := "heap?debug=1"
	if collect {
		path += "&gc=1"
	}
	body, err := httpBody(ctx, "http://"+m.pprof+"/debug/pprof/"+path, time.Minute)
	if err != nil {
		return goMemory{}, err
	}
	return parseMemStats(string(body))
}

// parseMemStats reads the "# Name = value" lines that close a debug=1 heap profile. Of the
// lines that print "in use / mapped" (Stack, MSpan, MCache), it keeps what is mapped.
func parseMemStats(text string) (goMemory, error) {
	var g goMemory
	want := map[string]*int64{
		"HeapAlloc": &g.HeapAlloc, "Sys": &g.Sys, "HeapReleased": &g.HeapReleased, "NextGC": &g.NextGC,
		"HeapInuse": &g.HeapInuse, "HeapIdle": &g.HeapIdle, "Stack": &g.StackSys, "MSpan": &g.MSpanSys,
		"MCache": &g.MCacheSys, "GCSys": &g.GCSys, "BuckHashSys": &g.BuckHashSys, "OtherSys": &g.OtherSys,
	}
	found := 0
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok || want[name] == nil {
			continue
		}
		if _, mapped, pair := strings.Cut(value, " / "); pair {
			value = mapped
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return g, fmt.Errorf("memory statistics %s: %w", name, err)
		}
		*want[name] = n
		found++
	}
	if found != len(want) {
		return g, fmt.Errorf("memory statistics: %d of %d fields in the heap profile", found, len(want))
	}
	return g, nil
}

// httpBody returns the body of a GET that answers 200.
func httpBody(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}
