package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// observation is one stored version of a Runtime, as the suite's watch delivered it.
type observation struct {
	// at is when the watch delivered it: the version was stored at or before that moment.
	at time.Time
	rv string
	// listed marks a version read by a (re)list rather than delivered as an event.
	listed   bool
	deleting bool
	gone     bool
	state    infrav1.State
	step     *infrav1.StepStatus
	retry    *infrav1.RetryStatus
	// readyReason and readyMessage are the Ready condition's.
	readyReason, readyMessage string
	// world is what the status mirrors of the shoot; meta is what the suite or the manager
	// changed outside the status (generation, finalizers, annotations, deletion).
	world, meta string
}

// observe copies what the invariants need out of a Runtime.
func observe(rt *infrav1.Runtime, at time.Time, listed bool) observation {
	o := observation{
		at: at, rv: rt.ResourceVersion, listed: listed, deleting: rt.DeletionTimestamp != nil,
		state: rt.Status.State, step: rt.Status.Step.DeepCopy(), retry: rt.Status.Retry.DeepCopy(),
	}
	if c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady); c != nil {
		o.readyReason, o.readyMessage = c.Reason, c.Message
	}
	o.world = fingerprint(rt.Status.Gardener, rt.Status.ShootLastOperation, rt.Status.ShootLastErrors)
	o.meta = fingerprint(rt.Generation, rt.Finalizers, rt.Annotations, rt.DeletionTimestamp)
	return o
}

// fingerprint is the JSON of values, for comparing them.
func fingerprint(values ...any) string {
	data, err := json.Marshal(values)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// stepsPassed lists the steps of the Runtime machine that lead from prev's step to o's, o's
// included: the shortest path along the machine's edges, or, when there is none, the path from
// the start step (or the deletion step, for a step of the deletion), with restarted set. The same
// step entered afresh passes that step alone.
func stepsPassed(prev, o observation) (steps []string, restarted bool) {
	if o.step == nil {
		return nil, false
	}
	if prev.step != nil {
		if prev.step.Name == o.step.Name {
			return []string{o.step.Name}, false
		}
		if path, ok := machinePath(prev.step.Name, o.step.Name); ok {
			return path, false
		}
	}
	first := runtimeMachine.Start
	if runtimeDeletionSteps[o.step.Name] {
		first = runtimeMachine.Deletion
	}
	path, _ := machinePath(first, o.step.Name)
	return append([]string{first}, path...), true
}

// stepsBetween is how many step changes of the machine lead from prev's step to o's.
func stepsBetween(prev, o observation) int {
	steps, _ := stepsPassed(prev, o)
	return len(steps)
}

// machinePath returns the steps after from up to and including to, along the shortest path of
// the Runtime machine's edges (Done follows each step without edges).
func machinePath(from, to string) ([]string, bool) {
	next := map[string][]string{}
	for _, s := range runtimeMachine.Steps {
		next[s.Name] = s.Next
		if len(s.Next) == 0 {
			next[s.Name] = []string{fsm.StepDone}
		}
	}
	via := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			var path []string
			for ; n != from; n = via[n] {
				path = append([]string{n}, path...)
			}
			return path, true
		}
		for _, m := range next[n] {
			if _, seen := via[m]; !seen {
				via[m] = n
				queue = append(queue, m)
			}
		}
	}
	return nil, false
}

// writeKind says what one write of a Runtime changed, judged by the first of these that applies.
type writeKind int

const (
	// writeStep moved the Runtime to another step, or into the same step afresh.
	writeStep writeKind = iota
	// writeInput changed something outside the status: the suite's deletion, a finalizer.
	writeInput
	// writeRetry changed the retry record: a failure, a pause, a retry that ran.
	writeRetry
	// writeWorld mirrored a change of the shoot (its last operation or errors).
	writeWorld
	// writeOther is any other status write: of a waiting step's message, a state, a condition.
	writeOther
	writeKinds
)

func (k writeKind) String() string {
	return [...]string{"step changes", "inputs", "retry records", "shoot mirrors", "other"}[k]
}

// classify says what the write from prev to o changed.
func classify(prev, o observation) writeKind {
	switch {
	case !sameStep(prev, o):
		return writeStep
	case prev.meta != o.meta:
		return writeInput
	case fingerprint(prev.retry) != fingerprint(o.retry):
		return writeRetry
	case prev.world != o.world:
		return writeWorld
	case prev.readyReason == fsm.ReasonWaiting && o.readyReason == fsm.ReasonWaiting && prev.readyMessage != o.readyMessage:
		// What a waiting step waits for changed (a shoot became visible before it reports an
		// operation): news from the world that the shoot's mirror does not show.
		return writeWorld
	}
	return writeOther
}

// attempt is the retry attempt the observation counts for step, 0 without a record for it.
func (o observation) attempt(step string) int32 {
	if o.retry == nil || o.retry.Step != step {
		return 0
	}
	return o.retry.Attempt
}

// sameStep reports whether two observations are in the same step, entered at the same time.
func sameStep(a, b observation) bool {
	if a.step == nil || b.step == nil {
		return a.step == nil && b.step == nil
	}
	return a.step.Name == b.step.Name && a.step.EnteredAt.Equal(&b.step.EnteredAt)
}

// history is everything the watch saw of one Runtime.
type history struct {
	name  string
	shoot string
	stuck bool
	obs   []observation
	// writes counts the new resourceVersions the watch delivered after the first: one per write.
	writes int
	// stepChanges counts the changes of step (name or entry time) between observations.
	stepChanges int
	// machineSteps counts the step changes of the machine the written ones stand for: the
	// manager runs steps that move on in one call and writes where it got to.
	machineSteps int
	// byKind counts the writes by what they changed.
	byKind [writeKinds]int
	// run is the steps entered since the machine last started (or started its deletion).
	run map[string]bool
	// createdAt is when the suite created it, deleteAt when it asked for its deletion.
	createdAt, deleteAt time.Time
	// readyAt is when it was first seen Ready; settledAt when it was last seen becoming Ready or
	// Failed, both before its deletion.
	readyAt, settledAt time.Time
	// maxPastDeadline is the longest it was seen waiting past its step deadline, not Failed.
	maxPastDeadline time.Duration
}

// latest is the last observation, or the zero observation.
func (h *history) latest() observation {
	if len(h.obs) == 0 {
		return observation{}
	}
	return h.obs[len(h.obs)-1]
}

// inForce returns the last observation delivered before t.
func (h *history) inForce(t time.Time) (observation, bool) {
	var out observation
	found := false
	for _, o := range h.obs {
		if !o.at.Before(t) {
			break
		}
		out, found = o, true
	}
	return out, found
}

// recorder keeps the history of every Runtime and checks, as each version arrives, the
// invariants that compare a version with the one before it.
type recorder struct {
	mu       sync.Mutex
	runtimes map[string]*history
	byShoot  map[string]*history
	report   *report
	grace    time.Duration
	// connected is whether the watch runs; a deadline is judged only then, from fresh news.
	connected bool
	// relists counts watches that could not resume and listed again, gaps in the record.
	relists, reconnects int
	// pastDeadline remembers the deadline violations already reported.
	pastDeadline map[string]bool
}

func newRecorder(r *report, grace time.Duration) *recorder {
	return &recorder{runtimes: map[string]*history{}, byShoot: map[string]*history{}, report: r, grace: grace, pastDeadline: map[string]bool{}}
}

// track registers a Runtime the suite creates.
func (rec *recorder) track(name, shoot string, stuck bool, created time.Time) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	h := &history{name: name, shoot: shoot, stuck: stuck, createdAt: created}
	rec.runtimes[name], rec.byShoot[shoot] = h, h
}

// add records one version and checks it against the one before.
func (rec *recorder) add(rt *infrav1.Runtime, at time.Time, listed bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	h, ok := rec.runtimes[rt.Name]
	if !ok {
		return // not one of the suite's (the admission probe)
	}
	o := observe(rt, at, listed)
	if len(h.obs) > 0 {
		prev := h.latest()
		if prev.rv == o.rv {
			return // a relist delivering what the watch had delivered
		}
		h.writes++
		if !sameStep(prev, o) {
			h.stepChanges++
			h.machineSteps += stepsBetween(prev, o)
		}
		h.byKind[classify(prev, o)]++
		rec.checkAttempt(h, prev, o)
	}
	rec.checkStepOnce(h, h.latest(), o)
	// Ready and Failed count before the deletion only.
	if !o.deleting && (o.state == infrav1.StateReady || o.state == infrav1.StateFailed) && h.latest().state != o.state {
		h.settledAt = at
		if o.state == infrav1.StateReady && h.readyAt.IsZero() {
			h.readyAt = at
		}
	}
	h.obs = append(h.obs, o)
}

// markDeleting records when the suite asked for a Runtime's deletion.
func (rec *recorder) markDeleting(name string, at time.Time) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if h, ok := rec.runtimes[name]; ok {
		h.deleteAt = at
	}
}

// gone records that a Runtime was deleted.
func (rec *recorder) gone(name string, at time.Time) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if h, ok := rec.runtimes[name]; ok && !h.latest().gone {
		h.obs = append(h.obs, observation{at: at, gone: true, rv: "gone"})
	}
}

// checkStepOnce is the step-once invariant: within one run of the machine (from its start step,
// or from its deletion step), no step is entered a second time, counting the steps a write
// passed over (the manager runs steps that move on in one call); a step the Runtime left is never
// run again from a stale copy. The machine starts again only from Done (a re-check) or into its
// deletion. The same step entered afresh (a pause that ended, a recovery) is not a second entry.
func (rec *recorder) checkStepOnce(h *history, prev, o observation) {
	if o.step == nil || (prev.step != nil && prev.step.Name == o.step.Name) {
		return
	}
	rec.report.count(invStepOnce)
	from := "(none)"
	if prev.step != nil {
		from = prev.step.Name
	}
	passed, restarted := stepsPassed(prev, o)
	if restarted || h.run == nil {
		if restarted && prev.step != nil && from != fsm.StepDone && (runtimeDeletionSteps[from] || !runtimeDeletionSteps[o.step.Name]) {
			rec.report.violate(invStepOnce, h.name, o.at, fmt.Sprintf(
				"step %s entered from %s (rv %s → %s), which does not lead there: the machine went back", o.step.Name, from, prev.rv, o.rv))
		}
		h.run = map[string]bool{}
	}
	for _, step := range passed {
		if h.run[step] {
			rec.report.violate(invStepOnce, h.name, o.at, fmt.Sprintf(
				"step %s entered again (rv %s → %s, from %s to %s) within one run of the machine", step, prev.rv, o.rv, from, o.step.Name))
		}
		h.run[step] = true
	}
}

// checkAttempt is the retry-counter invariant: within one step (same name, same entry time) and
// without success, the attempt counter of that step's retry record never goes down. Success is
// the step moving on or the Runtime becoming Ready; either changes the step.
func (rec *recorder) checkAttempt(h *history, prev, o observation) {
	rec.report.count(invAttempt)
	if prev.retry == nil || prev.retry.Attempt == 0 || !sameStep(prev, o) || o.state == infrav1.StateReady {
		return
	}
	step := prev.retry.Step
	if got := o.attempt(step); got < prev.retry.Attempt {
		now := "no retry record"
		if o.retry != nil {
			now = fmt.Sprintf("retry record of step %s at attempt %d", o.retry.Step, o.retry.Attempt)
		}
		how := "event"
		if o.listed {
			how = "relist"
		}
		rec.report.violate(invAttempt, h.name, o.at, fmt.Sprintf(
			"retry attempt of step %s went from %d (rv %s, seen %s) to %d (rv %s, %s at %s) while still in step %s entered %s: %s",
			step, prev.retry.Attempt, prev.rv, clock(prev.at), got, o.rv, how, clock(o.at), o.step.Name,
			clock(o.step.EnteredAt.Time), now))
	}
}

// checkDeadlines is the deadline invariant at one moment: no Runtime seen waiting in a step past
// status.step.deadline plus the grace without being Failed. Ready Runtimes (whose Done step's
// deadline is their next re-check) and gone ones do not count. It is judged only while the watch
// runs, so that a Runtime marked Failed during an outage of the API server is not blamed.
func (rec *recorder) checkDeadlines(now time.Time) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.report.count(invDeadline)
	if !rec.connected {
		return
	}
	for _, h := range rec.runtimes {
		o := h.latest()
		if o.gone || o.step == nil || o.step.Deadline == nil || o.state == infrav1.StateFailed || o.state == infrav1.StateReady {
			continue
		}
		past := now.Sub(o.step.Deadline.Time)
		if past <= 0 {
			continue
		}
		h.maxPastDeadline = max(h.maxPastDeadline, past)
		key := fmt.Sprintf("%s/%s/%s", h.name, o.step.Name, o.step.Deadline.UTC().Format(time.RFC3339))
		if past > rec.grace && !rec.pastDeadline[key] {
			rec.pastDeadline[key] = true
			rec.report.violate(invDeadline, h.name, now, fmt.Sprintf(
				"state %s in step %s (entered %s) is %s past its deadline %s, not Failed (last stored version rv %s, seen %s)",
				o.state, o.step.Name, clock(o.step.EnteredAt.Time), past.Round(time.Second), clock(o.step.Deadline.Time), o.rv, clock(o.at)))
		}
	}
}

// setConnected records whether the watch runs.
func (rec *recorder) setConnected(c bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.connected = c
}

// watchRuntimes records every version of the Runtimes in the namespace until ctx ends. It lists,
// then watches from the list's resourceVersion; when a watch ends it resumes from the last
// version it saw, so no version is missed, and lists again only when the API server no longer
// has that version (410 Gone), which it counts as a gap. An API server that is down is retried
// every half second.
func (rec *recorder) watchRuntimes(ctx context.Context, c client.WithWatch) {
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			list := &infrav1.RuntimeList{}
			if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
				rec.setConnected(false)
				pause(ctx, 500*time.Millisecond)
				continue
			}
			now := time.Now()
			present := map[string]bool{}
			for i := range list.Items {
				present[list.Items[i].Name] = true
				rec.add(&list.Items[i], now, true)
			}
			rec.markMissingGone(present, now)
			rv = list.ResourceVersion
		}
		w, err := c.Watch(ctx, &infrav1.RuntimeList{}, client.InNamespace(namespace),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			rec.setConnected(false)
			if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				rec.noteRelist()
				rv = ""
			}
			pause(ctx, 500*time.Millisecond)
			continue
		}
		rec.setConnected(true)
		rv = rec.drain(w, rv)
		w.Stop()
		rec.setConnected(false)
		rec.noteReconnect()
	}
}

// drain records the events of one watch and returns the resourceVersion to resume from ("" to
// list again).
func (rec *recorder) drain(w watch.Interface, rv string) string {
	for ev := range w.ResultChan() {
		now := time.Now()
		switch ev.Type {
		case watch.Error:
			if st, ok := ev.Object.(*metav1.Status); ok && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone) {
				rec.noteRelist()
				return ""
			}
			return rv
		case watch.Bookmark:
			if o, ok := ev.Object.(client.Object); ok {
				rv = o.GetResourceVersion()
			}
		case watch.Added, watch.Modified:
			if rt, ok := ev.Object.(*infrav1.Runtime); ok {
				rec.add(rt, now, false)
				rv = rt.ResourceVersion
			}
		case watch.Deleted:
			if rt, ok := ev.Object.(*infrav1.Runtime); ok {
				rec.gone(rt.Name, now)
				rv = rt.ResourceVersion
			}
		}
	}
	return rv
}

// markMissingGone records as gone the tracked Runtimes a list no longer has.
func (rec *recorder) markMissingGone(present map[string]bool, at time.Time) {
	rec.mu.Lock()
	var missing []string
	for name, h := range rec.runtimes {
		if !present[name] && len(h.obs) > 0 {
			missing = append(missing, name)
		}
	}
	rec.mu.Unlock()
	for _, name := range missing {
		rec.gone(name, at)
	}
}

func (rec *recorder) noteRelist() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.relists++
}

func (rec *recorder) noteReconnect() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.reconnects++
}

// snapshot returns a copy of the histories, for the checks at the end.
func (rec *recorder) snapshot() map[string]*history {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make(map[string]*history, len(rec.runtimes))
	for name, h := range rec.runtimes {
		cp := *h
		cp.obs = append([]observation(nil), h.obs...)
		out[name] = &cp
	}
	return out
}

// settled reports whether every Runtime is Ready or Failed, and how many are Ready.
func (rec *recorder) settled() (all bool, ready, failed int, pending []string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for name, h := range rec.runtimes {
		switch h.latest().state {
		case infrav1.StateReady:
			ready++
		case infrav1.StateFailed:
			failed++
		default:
			pending = append(pending, fmt.Sprintf("%s (%s)", name, describe(h.latest())))
		}
	}
	return len(pending) == 0, ready, failed, pending
}

// describe says where a Runtime is, for messages.
func describe(o observation) string {
	if o.step == nil {
		return fmt.Sprintf("state %q, no step", o.state)
	}
	s := fmt.Sprintf("state %s, step %s since %s", o.state, o.step.Name, clock(o.step.EnteredAt.Time))
	if o.retry != nil {
		s += fmt.Sprintf(", retry of %s attempt %d/%d (%s %s)", o.retry.Step, o.retry.Attempt, o.retry.Limit, o.retry.Class, o.retry.Reason)
	}
	return s
}

// requestLog follows the simulator's request log: every call that reached the Gardener API.
type requestLog struct {
	admin   string
	mu      sync.Mutex
	records []proxy.RequestRecord
	next    uint64
	dropped uint64
}

// follow reads new records every second until ctx ends, and once more after.
func (l *requestLog) follow(ctx context.Context) {
	for {
		_ = l.fetch(context.WithoutCancel(ctx))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// fetch reads every record after the last one read.
func (l *requestLog) fetch(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		body, err := httpGet(ctx, fmt.Sprintf("%s/requests?after=%d&limit=5000", l.admin, l.next))
		if err != nil {
			return err
		}
		var page proxy.RequestPage
		if err := json.Unmarshal(body, &page); err != nil {
			return fmt.Errorf("decode request log: %w", err)
		}
		l.records = append(l.records, page.Records...)
		l.dropped += page.Dropped
		if page.Next == l.next {
			return nil
		}
		l.next = page.Next
	}
}

// all returns the records read so far.
func (l *requestLog) all() ([]proxy.RequestRecord, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]proxy.RequestRecord(nil), l.records...), l.dropped
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// clock formats a time for messages: wall clock with milliseconds.
func clock(t time.Time) string { return t.Format("15:04:05.000") }
