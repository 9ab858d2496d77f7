package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestChaos provisions the profile's Runtimes through the real binaries while it kills manager
// replicas, restarts the kube-apiserver and lets the simulator fault Gardener calls; then it
// deletes them all. It fails on any violated invariant, with the Runtime, the time and what was
// seen; the table of invariants and figures is logged and printed either way.
func TestChaos(t *testing.T) {
	runChaos(t, prof)
}

// TestAPIServerRestartWritesOncePerStep restarts the control plane's kube-apiserver while
// Runtimes provision, with no other chaos: no Gardener faults, no kills, one replica. What the
// manager writes then is all its own doing, so besides the invariants of every run it must make
// no status write that neither changes the step nor records something new (a retry, what the
// shoot reports, an input), and no second write of a shoot or its ConfigMap before the deletion.
func TestAPIServerRestartWritesOncePerStep(t *testing.T) {
	p := prof
	p.Stuck, p.Kills, p.LeaderKills, p.Replicas = 0, 0, 0, 1
	p.Transient, p.Malformed = 0, 0
	p.APIServerRestarts = 1
	// The restart falls within the first 30s, while the Runtimes created over 20s are in
	// their first steps.
	p.Spread, p.Window = 20*time.Second, 30*time.Second
	runChaos(t, p)
}

// runChaos runs the suite with profile p.
func runChaos(t *testing.T, p profile) {
	if testing.Short() {
		t.Skip("chaos: skipped with -short: it builds and runs the manager, the simulator and three API servers")
	}
	if err := p.validate(); err != nil {
		t.Fatal(err)
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(testenv.RepoRoot(), "bin", "k8s")
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			t.Fatalf("%s: run 'make envtest-binaries' or set KUBEBUILDER_ASSETS: %v", filepath.Join(assets, bin), err)
		}
	}
	dir, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		t.Fatal(err)
	}
	// The suite's own clients log (envtest, client-go) into the work directory.
	clientLog, err := os.Create(filepath.Join(dir, "test-clients.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = clientLog.Close() })
	ctrl.SetLogger(zap.New(zap.WriteTo(clientLog), zap.UseDevMode(true)))
	logf(t, "chaos: profile %s; reproduce with -seed=%d; logs in %s", p, p.Seed, dir)

	// Every wait is bounded by the test's own deadline (-timeout), less a minute to report and
	// stop everything.
	endBy := time.Now().Add(24 * time.Hour)
	if deadline, ok := t.Deadline(); ok {
		endBy = deadline.Add(-time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), endBy)
	defer cancel()

	s := &suite{dir: dir, assets: assets, stopping: make(chan struct{})}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		if t.Failed() || p.Keep {
			logf(t, "chaos: logs kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	began := time.Now()
	for _, phase := range []struct {
		name string
		run  func() error
	}{
		{"build", func() error { return s.buildBinaries(ctx) }},
		{"control plane", func() error { return s.startControlPlane(ctx) }},
		{"simulator", func() error { return s.startSimulator(ctx, p) }},
		{"leader election", s.detectLeaderElection},
		{"managers", func() error { return s.startManagers(ctx, p) }},
	} {
		start := time.Now()
		if err := phase.run(); err != nil {
			t.Fatalf("chaos: %s: %v", phase.name, err)
		}
		logf(t, "chaos: %s ready in %s", phase.name, time.Since(start).Round(100*time.Millisecond))
	}
	logf(t, "chaos: stack ready in %s; leader election by %s", time.Since(began).Round(100*time.Millisecond), s.leaderElection)

	r := run{t: t, p: p, s: s, rep: newReport(), rng: rand.New(rand.NewPCG(p.Seed, 0x6368616f73)), endBy: endBy}
	r.rec = newRecorder(r.rep, p.DeadlineGrace)
	r.reqs = &requestLog{admin: s.simAdmin}
	r.execute(ctx)
}

// run is one execution of the suite against a started stack.
type run struct {
	t    *testing.T
	p    profile
	s    *suite
	rep  *report
	rec  *recorder
	reqs *requestLog
	rng  *rand.Rand

	// t0 is when the first Runtime was created.
	t0       time.Time
	runtimes []chaosRuntime
	chaosLog chaosLog
	// endBy is when the checks must be done, from the test's -timeout.
	endBy time.Time
}

// checksTime is what the checks between the settling and the deletion may take at most.
const checksTime = 90 * time.Second

// bounded returns d, or what is left until the checks must end when that is less, and says
// whether it cut d short: a -timeout too short for the profile shows in the result, not as a
// hang.
func (r *run) bounded(d time.Duration, reserve time.Duration) (time.Duration, string) {
	if left := time.Until(r.endBy) - reserve; left < d {
		return max(left, 0), fmt.Sprintf(" (cut from %s by the test's -timeout: give it more)", d)
	}
	return d, ""
}

// execute creates the Runtimes, runs the chaos, waits for them to settle, checks, deletes them
// all, checks the cleanup, and reports.
func (r *run) execute(ctx context.Context) {
	t, p, s := r.t, r.p, r.s
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var background sync.WaitGroup
	background.Add(3)
	go func() { defer background.Done(); r.rec.watchRuntimes(watchCtx, s.cp) }()
	go func() { defer background.Done(); r.reqs.follow(watchCtx) }()
	go func() {
		defer background.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-watchCtx.Done():
				return
			case now := <-tick.C:
				r.rec.checkDeadlines(now)
			}
		}
	}()

	var err error
	if r.runtimes, err = newRuntimes(p, r.rng); err != nil {
		t.Fatal(err)
	}
	// The Runtimes arrive over the spread while the chaos runs from the first one on.
	offsets := make([]time.Duration, len(r.runtimes))
	for i := range offsets[1:] {
		offsets[i+1] = time.Duration(r.rng.Int64N(int64(p.Spread) + 1))
	}
	slices.Sort(offsets)
	r.t0 = time.Now()
	chaosDone := make(chan chaosLog, 1)
	go func() { chaosDone <- r.chaos(ctx) }()
	for i, cr := range r.runtimes {
		pause(ctx, time.Until(r.t0.Add(offsets[i])))
		r.rec.track(cr.rt.Name, cr.rt.Spec.Shoot.Name, cr.stuck, time.Now())
		if err := createWithRetry(ctx, s.cp, cr.rt); err != nil {
			t.Errorf("chaos: create runtime %s: %v", cr.rt.Name, err)
		}
	}
	logf(t, "chaos: %d Runtimes created within %s", len(r.runtimes), time.Since(r.t0).Round(time.Millisecond))

	// Settle: every Runtime Ready or Failed, and the chaos over.
	var cl chaosLog
	chaosOver := false
	settleFor, cut := r.bounded(time.Until(r.t0.Add(p.Window+p.Settle)), p.Cleanup+checksTime)
	settleErr := poll(ctx, settleFor, time.Second, func(context.Context) (bool, error) {
		if !chaosOver {
			select {
			case cl = <-chaosDone:
				chaosOver = true
			default:
			}
		}
		all, ready, failed, pending := r.rec.settled()
		if !all {
			return false, fmt.Errorf("%d Ready, %d Failed, still pending: %s", ready, failed, strings.Join(pending, "; "))
		}
		return chaosOver, nil
	})
	settledAt := time.Now()
	if settleErr != nil {
		logf(t, "chaos: not settled %s after the first creation%s: %v", time.Since(r.t0).Round(time.Second), cut, settleErr)
		r.rep.figure("settle wait", "%s%s", settleFor.Round(time.Second), cut)
		if !chaosOver {
			cl = <-chaosDone
		}
	} else {
		logf(t, "chaos: settled %s after the first creation", settledAt.Sub(r.t0).Round(time.Second))
	}
	r.reportChaos(cl)
	r.chaosLog = cl

	// The end-state checks, then the deletion of everything.
	checkSettled(ctx, s, r.rec, r.rep)
	if err := r.reqs.fetch(ctx); err != nil {
		logf(t, "chaos: request log: %v", err)
	}
	records, _ := r.reqs.all()
	if err := checkShoots(ctx, s, r.rec, r.rep, records); err != nil {
		t.Errorf("chaos: shoots: %v", err)
	}
	deleteBegan := time.Now()
	for _, cr := range r.runtimes {
		r.rec.markDeleting(cr.rt.Name, time.Now())
		if err := deleteWithRetry(ctx, s.cp, cr.rt); err != nil {
			t.Errorf("chaos: delete runtime %s: %v", cr.rt.Name, err)
		}
	}
	cleanupFor, cut := r.bounded(p.Cleanup, 0)
	if cut != "" {
		r.rep.figure("cleanup wait", "%s%s", cleanupFor.Round(time.Second), cut)
	}
	cleanupTook := checkCleanup(ctx, s, r.rec, r.rep, cleanupFor)
	logf(t, "chaos: cleanup checked %s after the deletions began", cleanupTook.Round(time.Second))

	stopWatch()
	background.Wait()
	if err := r.reqs.fetch(context.Background()); err != nil {
		logf(t, "chaos: request log: %v", err)
	}
	records, dropped := r.reqs.all()
	gardenWrites := checkEarlyWrites(r.rec, r.rep, records)
	if p.quiet() {
		checkOwnWrites(r.rec, r.rep, records)
	}
	r.figures(settledAt, deleteBegan, cleanupTook, records, dropped, gardenWrites)

	table := r.rep.table(p.String())
	t.Log(table)
	fmt.Println(table)
	for _, inv := range r.rep.failed() {
		t.Errorf("chaos: invariant violated: %s:\n%s", inv.title(), r.rep.details(inv, 25))
	}
}

// chaosLog is what the chaos did.
type chaosLog struct {
	kills    []killRecord
	restarts []restartRecord
}

// killRecord is one SIGKILL of a replica.
type killRecord struct {
	at          time.Time
	replica     string
	aimed       bool // aimed at the leader
	wasLeader   bool // the replica reported leadership just before
	leaderAfter time.Duration
	err         error
}

// restartRecord is one restart of the kube-apiserver.
type restartRecord struct {
	at   time.Time
	down time.Duration
	err  error
}

// chaosAction is one planned disruption, at an offset from t0.
type chaosAction struct {
	at   time.Duration
	kind string // kill, leader-kill, apiserver-restart
}

// plan draws the moments of the kills and restarts within the window; which kills aim at the
// leader is drawn too.
func (r *run) plan() []chaosAction {
	var out []chaosAction
	w := r.p.Window
	aimed := map[int]bool{}
	for _, i := range r.rng.Perm(r.p.Kills)[:r.p.LeaderKills] {
		aimed[i] = true
	}
	for i := range r.p.Kills {
		kind := "kill"
		if aimed[i] {
			kind = "leader-kill"
		}
		out = append(out, chaosAction{at: w/20 + time.Duration(r.rng.Int64N(int64(w-w/20))), kind: kind})
	}
	for range r.p.APIServerRestarts {
		out = append(out, chaosAction{at: w/5 + time.Duration(r.rng.Int64N(int64(3*w/5))), kind: "apiserver-restart"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// chaos carries out the plan, one action after the other: an action whose moment passed while
// the one before ran happens at once.
func (r *run) chaos(ctx context.Context) chaosLog {
	var log chaosLog
	for _, a := range r.plan() {
		select {
		case <-ctx.Done():
			return log
		case <-time.After(time.Until(r.t0.Add(a.at))):
		}
		switch a.kind {
		case "apiserver-restart":
			at := time.Now()
			down, err := r.s.restartAPIServer(ctx, r.p.APIServerDown)
			log.restarts = append(log.restarts, restartRecord{at: at, down: down, err: err})
			logf(r.t, "chaos: %s kube-apiserver restarted, unreachable for %s (err %v)", clock(at), down.Round(100*time.Millisecond), err)
		default:
			k := r.kill(ctx, a.kind == "leader-kill")
			log.kills = append(log.kills, k)
			logf(r.t, "chaos: %s SIGKILL %s (aimed at the leader %v, was leader %v; a leader again after %s; err %v)",
				clock(k.at), k.replica, k.aimed, k.wasLeader, k.leaderAfter.Round(100*time.Millisecond), k.err)
		}
	}
	return log
}

// kill SIGKILLs a replica: the leader when aimed, else one drawn at random. It then waits until
// a replica leads again, which is part of the record.
func (r *run) kill(ctx context.Context, aimed bool) killRecord {
	k := killRecord{aimed: aimed}
	var target *replica
	// Aimed kills wait for a leader; the others only look whether their target leads.
	wait := 5 * time.Second
	if aimed {
		wait = time.Minute
	}
	leader, leaderErr := r.s.findLeader(ctx, wait)
	if aimed {
		if leaderErr != nil {
			k.err = fmt.Errorf("no leader to kill: %w", leaderErr)
		}
		target = leader
	}
	if target == nil {
		target = r.s.replicas[r.rng.IntN(len(r.s.replicas))]
	}
	k.replica, k.wasLeader, k.at = target.name, target == leader, time.Now()
	if err := r.s.killReplica(target); err != nil {
		k.err = err
		return k
	}
	if _, err := r.s.findLeader(ctx, 2*time.Minute); err != nil && k.err == nil {
		k.err = fmt.Errorf("no leader after the kill: %w", err)
	}
	k.leaderAfter = time.Since(k.at)
	return k
}

// reportChaos records the chaos's own failures under its invariant.
func (r *run) reportChaos(cl chaosLog) {
	for _, k := range cl.kills {
		r.rep.count(invChaos)
		if k.err != nil {
			r.rep.violate(invChaos, k.replica, k.at, fmt.Sprintf("SIGKILL (aimed at the leader %v): %v", k.aimed, k.err))
		}
	}
	for _, rs := range cl.restarts {
		r.rep.count(invChaos)
		if rs.err != nil {
			r.rep.violate(invChaos, "kube-apiserver", rs.at, rs.err.Error())
		}
	}
	planned := r.p.Kills + r.p.APIServerRestarts
	if done := len(cl.kills) + len(cl.restarts); done < planned {
		r.rep.violate(invChaos, "(plan)", time.Now(), fmt.Sprintf("%d of %d planned actions done before the test's deadline", done, planned))
	}
	r.rep.figure("kills done", "%d (%d aimed at the leader, %d hit the leader)", len(cl.kills), countKills(cl, true), countKills(cl, false))
	var downs []string
	for _, rs := range cl.restarts {
		downs = append(downs, rs.down.Round(100*time.Millisecond).String())
	}
	r.rep.figure("kube-apiserver restarts", "%d (unreachable %s; %d SIGKILLed after 15s of SIGTERM)",
		len(cl.restarts), strings.Join(downs, ", "), r.s.apiServerKilled)
	var leaderless time.Duration
	for _, k := range cl.kills {
		if k.wasLeader {
			leaderless = max(leaderless, k.leaderAfter)
		}
	}
	r.rep.figure("longest time without a leader after a kill", "%s", leaderless.Round(100*time.Millisecond))
}

func countKills(cl chaosLog, aimed bool) int {
	n := 0
	for _, k := range cl.kills {
		if (aimed && k.aimed) || (!aimed && k.wasLeader) {
			n++
		}
	}
	return n
}

// figures records the run's figures.
func (r *run) figures(settledAt, deleteBegan time.Time, cleanupTook time.Duration, records []proxy.RequestRecord, dropped uint64, gardenWrites int) {
	rep, hs := r.rep, r.rec.snapshot()
	var lastReady, lastSettled time.Time
	allReady := true
	var ready, failed int
	reasons := map[string]int{}
	writes, steps, machineSteps := 0, 0, 0
	kinds := map[string]int{}
	var pastDeadline time.Duration
	for _, h := range hs {
		writes += h.writes
		steps += h.stepChanges
		machineSteps += h.machineSteps
		for k, n := range h.byKind {
			kinds[writeKind(k).String()] += n
		}
		pastDeadline = max(pastDeadline, h.maxPastDeadline)
		if !h.stuck {
			if h.readyAt.IsZero() {
				allReady = false
			}
			lastReady = later(lastReady, h.readyAt)
		}
		lastSettled = later(lastSettled, h.settledAt)
		// The state before the deletion: the last observation before it began.
		if o, ok := h.inForce(deleteBegan); ok {
			switch o.state {
			case infrav1.StateReady:
				ready++
			case infrav1.StateFailed:
				failed++
				where := "(no retry record)"
				if o.retry != nil {
					where = o.retry.Step
				}
				reasons[o.readyReason+" in "+where]++
			}
		}
	}
	if allReady {
		rep.figure("time to all Ready (the non-stuck ones)", "%s", lastReady.Sub(r.t0).Round(time.Second))
	} else {
		rep.figure("time to all Ready (the non-stuck ones)", "never: not all of them became Ready")
	}
	rep.figure("time to all Ready or Failed", "%s", lastSettled.Sub(r.t0).Round(time.Second))
	rep.figure("time from creation to Ready (the non-stuck ones)", "%s", provisioningTimes(hs))
	rep.figure("Runtimes at the end", "%d Ready, %d Failed %s, %d stuck by design", ready, failed, formatCounts(reasons), r.p.Stuck)
	rep.figure("time to clean up after deleting all", "%s", cleanupTook.Round(time.Second))
	exits := r.s.unexpectedExits()
	var exitText []string
	for _, e := range exits {
		exitText = append(exitText, fmt.Sprintf("%s %s (%s)", clock(e.at), e.replica, e.err))
	}
	rep.figure("manager exits the suite did not cause", "%d %s", len(exits), strings.Join(exitText, "; "))
	rep.figure("faults injected", "%s", r.faults())

	byVerb, writesByVerb := map[string]int{}, map[string]int{}
	answered := map[string]int{}
	for _, rc := range records {
		byVerb[rc.Verb]++
		if slices.Contains(gardenWriteVerbs, rc.Verb) {
			writesByVerb[rc.Resource+" "+rc.Verb]++
		}
		switch {
		case rc.Code == 0:
			answered["no reply"]++
		case rc.Code >= 500:
			answered["5xx"]++
		case rc.Code >= 400:
			answered["4xx"]++
		}
	}
	rep.figure("Gardener requests by verb", "%d: %s", len(records), formatCounts(byVerb))
	rep.figure("Gardener writes by resource", "%s", formatCounts(writesByVerb))
	rep.figure("Gardener requests not answered 2xx", "%s", formatCounts(answered))
	rep.figure("step changes", "%d of the machine, in %d status writes", machineSteps, steps)
	rep.figure("status writes per step change", "%s (%d resourceVersions / %d step changes)", ratio(writes, machineSteps), writes, machineSteps)
	rep.figure("status writes by what they changed", "%s", formatCounts(kinds))
	rep.figure("Gardener writes per step change", "%s (%d writes of the Runtimes' shoots and ConfigMaps / %d step changes)", ratio(gardenWrites, machineSteps), gardenWrites, machineSteps)
	rep.figure("longest seen past a step deadline, not Failed", "%s (grace %s)", pastDeadline.Round(time.Second), r.p.DeadlineGrace)
	for _, rs := range r.chaosLog.restarts {
		rep.figure("rates in the minute before the kube-apiserver restart and after it was back",
			"Gardener requests %d → %d, Runtime status writes %d → %d",
			countRecords(records, rs.at.Add(-time.Minute), rs.at), countRecords(records, rs.at.Add(rs.down), rs.at.Add(rs.down+time.Minute)),
			countWrites(hs, rs.at.Add(-time.Minute), rs.at), countWrites(hs, rs.at.Add(rs.down), rs.at.Add(rs.down+time.Minute)))
	}
	r.rec.mu.Lock()
	rep.figure("watch", "%d reconnects, %d relists (gaps); request log: %d records lost", r.rec.reconnects, r.rec.relists, dropped)
	r.rec.mu.Unlock()
	rep.figure("settled at", "%s after the first creation", settledAt.Sub(r.t0).Round(time.Second))
}

// countRecords counts the Gardener requests that arrived in [from, to).
func countRecords(records []proxy.RequestRecord, from, to time.Time) int {
	n := 0
	for _, rc := range records {
		if !rc.Time.Before(from) && rc.Time.Before(to) {
			n++
		}
	}
	return n
}

// countWrites counts the new Runtime versions the watch delivered in [from, to).
func countWrites(hs map[string]*history, from, to time.Time) int {
	n := 0
	for _, h := range hs {
		for i, o := range h.obs {
			if i > 0 && !o.gone && !o.at.Before(from) && o.at.Before(to) {
				n++
			}
		}
	}
	return n
}

// provisioningTimes summarises how long the non-stuck Runtimes took from creation to Ready.
func provisioningTimes(hs map[string]*history) string {
	var took []time.Duration
	never := 0
	for _, h := range hs {
		switch {
		case h.stuck:
		case h.readyAt.IsZero():
			never++
		default:
			took = append(took, h.readyAt.Sub(h.createdAt))
		}
	}
	if len(took) == 0 {
		return fmt.Sprintf("none became Ready (%d never)", never)
	}
	slices.Sort(took)
	return fmt.Sprintf("median %s, 90th percentile %s, max %s (%d never Ready)", took[len(took)/2].Round(time.Second),
		took[len(took)*9/10].Round(time.Second), took[len(took)-1].Round(time.Second), never)
}

// faults reads the simulator's fault rules and their hits.
func (r *run) faults() string {
	body, err := httpGet(context.Background(), r.s.simAdmin+"/rules")
	if err != nil {
		return "unknown: " + err.Error()
	}
	var rules []fault.RuleStatus
	if err := json.Unmarshal(body, &rules); err != nil {
		return "unknown: " + err.Error()
	}
	total := 0
	hits := map[string]int{}
	for _, rule := range rules {
		total += rule.Hits
		hits[rule.Name] = rule.Hits
	}
	return fmt.Sprintf("%d: %s", total, formatCounts(hits))
}

// formatCounts renders counts as "a 3, b 1", largest first.
func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func ratio(a, b int) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// createWithRetry creates a Runtime, retrying while the API server is unreachable; one that
// exists already (a create whose reply was lost) is created.
func createWithRetry(ctx context.Context, c client.Client, rt *infrav1.Runtime) error {
	return poll(ctx, time.Minute, time.Second, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, rt.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), err
	})
}

// deleteWithRetry deletes a Runtime, retrying while the API server is unreachable; one that is
// gone already is deleted.
func deleteWithRetry(ctx context.Context, c client.Client, rt *infrav1.Runtime) error {
	return poll(ctx, time.Minute, time.Second, func(ctx context.Context) (bool, error) {
		err := client.IgnoreNotFound(c.Delete(ctx, rt.DeepCopy()))
		return err == nil, err
	})
}

// logf logs progress, stamped with the wall clock that the violations use too.
func logf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf(time.Now().Format("15:04:05.000 ")+format, args...)
}
