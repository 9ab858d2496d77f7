package fsm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Object is what an Engine drives: a Kubernetes object with the status the engine owns, which its
// type embeds from package fsmv1 (pkg/fsm/api/v1) and returns here.
type Object interface {
	client.Object
	EngineStatus() *fsmv1.EngineStatus
}

// Reasons of the Ready condition besides the failure reasons of package fsmv1.
const (
	ReasonReady       = "Ready"
	ReasonProgressing = "Progressing"
	ReasonWaiting     = "Waiting"
	ReasonRetrying    = "Retrying"
	ReasonPaused      = "Paused"
	ReasonDeleting    = "Deleting"
)

// Event reasons.
const (
	EventStepFailed     = "StepFailed"
	EventRetryRequested = "RetryRequested"
	EventRecovered      = "Recovered"
	EventPaused         = "Paused"
)

// ReasonDependencyDown is the retry reason of a waiting step whose deadline passed while the
// gate was closed.
const ReasonDependencyDown = "DependencyUnavailable"

// defaultAdvance is how soon the next step runs after a step moved on, unless WithAdvanceDelay
// says otherwise.
const defaultAdvance = time.Millisecond

// Engine runs objects through a Machine. It is safe for concurrent use by the workers of a
// controller. Per object, it keeps only the metric series it set and when it last re-checked a
// Ready object without a change.
type Engine[T Object] struct {
	m        Machine[T]
	steps    map[string]Step[T]
	deleting map[string]bool
	cfg      config
	// created is when the engine was created. It starts the spread of the first re-checks
	// (recheckDue).
	created time.Time
	// quiet holds the quiet re-checks of this process, by object (quietCheck).
	quiet sync.Map
}

// quietCheck is a re-check of a Ready object that changed nothing of its status. The engine
// leaves the status as it was, so a quiet fleet writes nothing, and keeps the time here.
type quietCheck struct {
	uid types.UID
	at  time.Time
}

// New returns an engine for the machine, or an error when the machine's table is incomplete.
func New[T Object](m Machine[T], opts ...Option) (*Engine[T], error) {
	if m.DefaultPolicy == (retry.Policy{}) {
		m.DefaultPolicy = retry.DefaultPolicy()
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	e := &Engine[T]{m: m, steps: map[string]Step[T]{}, deleting: m.DeletionSteps(), cfg: cfg, created: cfg.clock.Now()}
	names := make([]string, 0, len(m.Steps))
	for _, s := range m.Steps {
		e.steps[s.Name] = s
		names = append(names, s.Name)
	}
	if cfg.metrics != nil {
		cfg.metrics.precreate(m.Name, names)
	}
	return e, nil
}

// Machine returns the engine's transition table.
func (e *Engine[T]) Machine() Machine[T] { return e.m }

// decision is what one call decided: when to look at the object again. Zero means only on the
// next watch event.
type decision struct {
	after time.Duration
	// moved is set when the step moved on to another step, which may run at once.
	moved bool
	// abandoned is set when the caller canceled its context while the step ran: the manager is
	// stopping, and what the step saw says nothing about the object.
	abandoned bool
	// background is set for the periodic re-check of a finished object: it waits behind the
	// objects in flight in the controller's queue.
	background bool
}

// result is the one place where the engine's decision becomes a ctrl.Result. The engine never
// returns an error: every failure it saw is in the decision and in the status.
func (d decision) result() ctrl.Result {
	if d.after <= 0 {
		return ctrl.Result{}
	}
	r := ctrl.Result{RequeueAfter: d.after}
	if d.background {
		// With a priority queue, the re-check of a finished object comes after the work of
		// objects in flight, like the initial list's; otherwise the queue keeps the priority
		// the object was taken with.
		p := handler.LowPriority
		r.Priority = &p
	}
	return r
}

// Reconcile runs the due step of obj and updates the engine's part of its status in memory; the
// caller persists the status. While a step moves on, the next one runs in the same call, up to
// the chain limit (WithChain; one step by default), so one status write records where the object
// got to. It never acts before the retry record's next retry time. When ctx is canceled while a
// step runs (the manager stops), that step's outcome is dropped: no failure is counted or logged, and
// the status keeps what the steps before it in the call left.
func (e *Engine[T]) Reconcile(ctx context.Context, obj T) ctrl.Result {
	began := e.cfg.clock.Now()
	now := began
	st := &pass{EngineStatus: obj.EngineStatus().DeepCopy()}
	log := ctrl.LoggerFrom(ctx)
	if e.cfg.logValues != nil {
		log = log.WithValues(e.cfg.logValues(obj)...)
	}
	e.observeInputs(obj, st, now)
	// A Ready object still at Done after its inputs were seen may be due for its re-check.
	var ready *fsmv1.EngineStatus
	if st.Step.Name == StepDone && st.State == fsmv1.StateReady {
		ready = st.DeepCopy()
	}
	// Steps see the manual retry this call handles, so that one can tell it from a request it
	// recorded earlier (the rest of the engine's status reaches obj after each step).
	obj.EngineStatus().RetryRequestedAt = st.RetryRequestedAt
	for steps := 1; ; steps++ {
		before := summaryOf(obj.EngineStatus())
		log := log.WithValues("step", st.Step.Name)
		d := e.run(ctrl.LoggerInto(ctx, log), obj, st, now)
		if d.abandoned {
			// Neither a failure nor a retry: the step runs again in the next process, from the
			// status the last whole pass left.
			log.V(1).Info("Step abandoned: the manager is stopping", "cause", context.Cause(ctx))
			return ctrl.Result{}
		}
		if ready, ok := summarize(st.EngineStatus, st.verdict); ok {
			meta.SetStatusCondition(&st.Conditions, ready)
		}
		st.Conditions = stepConditions(obj.EngineStatus().Conditions, st.Conditions)
		logChange(log, before, st.EngineStatus)
		*obj.EngineStatus() = *st.EngineStatus
		now = e.cfg.clock.Now()
		if !d.moved || steps >= e.cfg.chainSteps || now.Sub(began) >= e.cfg.chainFor {
			e.keepQuiet(obj, ready, now)
			e.syncMetrics(obj, obj.EngineStatus())
			return d.result()
		}
		st = &pass{EngineStatus: st.DeepCopy()}
	}
}

// keepQuiet ends a re-check that changed nothing but the time Done was entered: the status goes
// back to what it was, so the caller writes nothing, and the engine keeps the time of the
// re-check instead. ready is the status before the re-check, nil when the call was no re-check.
func (e *Engine[T]) keepQuiet(obj T, ready *fsmv1.EngineStatus, now time.Time) {
	after := obj.EngineStatus()
	if ready == nil || after.Step == nil || after.Step.Name != StepDone || after.Step.EnteredAt.Equal(&ready.Step.EnteredAt) {
		return
	}
	was := after.DeepCopy()
	was.Step = ready.Step
	if !equality.Semantic.DeepEqual(was, ready) {
		return
	}
	*after = *was
	e.quiet.Store(client.ObjectKeyFromObject(obj), quietCheck{uid: obj.GetUID(), at: now})
}

// stepConditions returns the conditions after one call: every condition as the step left it on
// the object (steps own them all, such as Provisioned), with the engine's Ready condition, which
// the engine alone sets, on top.
func stepConditions(fromStep, fromEngine []metav1.Condition) []metav1.Condition {
	out := slices.Clone(fromStep)
	if ready := meta.FindStatusCondition(fromEngine, fsmv1.ConditionReady); ready != nil {
		meta.SetStatusCondition(&out, *ready)
	}
	return out
}

// statusSummary is what logChange compares of the status before a step: a copy of these few
// fields instead of the whole status, conditions and all, for every step of every call.
type statusSummary struct {
	State fsmv1.State
	// Step is the step's name, empty when the status had none.
	Step string
	// Retry is set when the status had a retry record; LastFailure is then its last failure.
	Retry       bool
	LastFailure metav1.Time
}

// summaryOf summarizes s for logChange.
func summaryOf(s *fsmv1.EngineStatus) statusSummary {
	out := statusSummary{State: s.State}
	if s.Step != nil {
		out.Step = s.Step.Name
	}
	if s.Retry != nil {
		out.Retry, out.LastFailure = true, s.Retry.LastFailure
	}
	return out
}

// logChange logs what one call changed: a step entered, a failure and its retry, a Failed
// object, a recovery. Polls that change nothing log nothing.
func logChange(log logr.Logger, before statusSummary, after *fsmv1.EngineStatus) {
	if after.State == fsmv1.StateFailed && before.State != fsmv1.StateFailed && after.Retry != nil {
		r := after.Retry
		log.Info("Failed: retries end here", "failedStep", r.Step, "class", r.Class, "reason", r.Reason,
			"attempt", r.Attempt, "limit", r.Limit, "message", r.Message)
		return
	}
	if before.State == fsmv1.StateFailed && after.State != fsmv1.StateFailed {
		log.Info("Recovered from Failed", "state", after.State)
	}
	if r := after.Retry; r != nil && r.NextRetryAt != nil && (!before.Retry || !before.LastFailure.Equal(&r.LastFailure)) {
		log.Info("Step failed, retry scheduled", "failedStep", r.Step, "class", r.Class, "reason", r.Reason,
			"attempt", r.Attempt, "limit", r.Limit, "nextRetry", r.NextRetryAt.Time, "message", r.Message)
	}
	if before.Step != after.Step.Name {
		log.V(1).Info("Entered step", "next", after.Step.Name, "state", after.State)
	}
}

// Forget drops what the engine keeps about an object that is gone, its metric series, and tells
// the machine's own forget hook (WithOnForget).
func (e *Engine[T]) Forget(key types.NamespacedName) {
	if e.cfg.objects != nil {
		e.cfg.objects.forget(e.seriesKey(key))
	}
	e.quiet.Delete(key)
	if e.cfg.onForget != nil {
		e.cfg.onForget(key)
	}
}

// observeInputs restarts the machine where the world asks for it: a new object, deletion, a new
// spec generation, or a manual retry.
func (e *Engine[T]) observeInputs(obj T, st *pass, now time.Time) {
	deleting := !obj.GetDeletionTimestamp().IsZero()
	switch {
	case deleting && e.m.Deletion != "" && (st.Step == nil || !e.deleting[st.Step.Name]):
		e.restart(st, e.m.Deletion, fsmv1.StateTerminating, now)
	case st.Step == nil:
		e.restart(st, e.m.Start, fsmv1.StatePending, now)
	case !deleting && obj.GetGeneration() != st.ObservedGeneration:
		e.restart(st, e.m.Start, fsmv1.StatePending, now)
	}
	st.ObservedGeneration = obj.GetGeneration()
	e.observeOutsideInputs(obj, st, deleting, now)

	requested, ok := st.PendingRetryRequest(obj.GetAnnotations(), e.cfg.retryAnnotation)
	if !ok {
		return
	}
	st.RetryRequestedAt = requested
	switch {
	case st.State == fsmv1.StateFailed || st.Retry != nil:
		e.cfg.recorder.Event(obj, corev1.EventTypeNormal, EventRetryRequested,
			fmt.Sprintf("Manual retry of step %s requested: the retry budget is reset", st.Step.Name))
		st.Retry = nil
		st.State = e.activeState(obj)
		st.Step.EnteredAt = metav1.NewTime(stamp(now))
	case st.Step.Name == StepDone && !deleting:
		e.enter(st, e.m.Start, now)
	}
}

// observeOutsideInputs records the fingerprint of the object's outside inputs when its machine
// starts, and starts a Ready object's machine again when the fingerprint changed since.
func (e *Engine[T]) observeOutsideInputs(obj T, st *pass, deleting bool, now time.Time) {
	if e.cfg.inputs == nil || deleting {
		return
	}
	inputs := e.cfg.inputs(obj)
	switch {
	case st.Step.Name == e.m.Start:
		st.ObservedInputs = inputs
	case st.Step.Name == StepDone && inputs != st.ObservedInputs:
		e.enter(st, e.m.Start, now)
		st.ObservedInputs = inputs
	}
}

// run decides and, when due, runs the current step.
func (e *Engine[T]) run(ctx context.Context, obj T, st *pass, now time.Time) decision {
	if st.Step.Name == StepDone {
		if d, idle := e.idle(obj, st, now); idle {
			return d
		}
		e.enter(st, e.m.Start, now)
	}
	if d, held := e.held(obj, st, now); held {
		return d
	}
	s, ok := e.steps[st.Step.Name]
	if !ok {
		// A status written by another version of the machine: start over from what it knows.
		e.restart(st, e.m.Start, e.activeState(obj), now)
		return decision{after: e.cfg.advance}
	}
	if r := st.Retry; r != nil && r.Step == s.Name && r.NextRetryAt != nil {
		// The run the engine scheduled after a counted failure, or a probe of a Failed object.
		ctx = context.WithValue(ctx, retryRunKey{}, true)
		if r.Attempt > 0 && st.State != fsmv1.StateFailed {
			e.count(func(m *Metrics) { m.retries.WithLabelValues(e.m.Name, s.Name).Inc() })
		}
	}

	started := e.cfg.clock.Now()
	stepCtx, cancel := context.WithTimeout(ctx, e.cfg.stepTimeout)
	defer cancel()
	out := s.Run(stepCtx, obj)
	if stopping(ctx) {
		return decision{abandoned: true}
	}
	elapsed := e.cfg.clock.Since(started).Seconds()
	e.count(func(m *Metrics) { m.stepDuration.WithLabelValues(e.m.Name, s.Name).Observe(elapsed) })
	return e.apply(obj, st, s, out, now)
}

// stopping reports whether the caller canceled ctx: the manager stops. A deadline of the caller
// (controller-runtime's ReconciliationTimeout) or of the step is a failure of the step, not a stop.
func stopping(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// held reports whether the object must wait before its step runs: its step is paused and the
// gate does not release it yet, or its next retry is not due. A pause the gate releases ends here.
func (e *Engine[T]) held(obj T, st *pass, now time.Time) (decision, bool) {
	if r := st.Retry; r != nil && r.PausedAt != nil && st.State != fsmv1.StateFailed {
		if wait := e.pausedFor(obj, r, now); wait > 0 {
			return decision{after: wait}, true
		}
		e.resume(st, now)
	}
	if r := st.Retry; r != nil {
		if wait := e.untilRetry(r, now); wait > 0 {
			return decision{after: wait}, true
		}
	}
	return decision{}, false
}

// untilRetry returns how long the retry record still holds its step: until its next retry time.
// The time is persisted, so a restart or a leader change retries nothing early.
func (e *Engine[T]) untilRetry(r *fsmv1.RetryStatus, now time.Time) time.Duration {
	if r.NextRetryAt == nil || !now.Before(r.NextRetryAt.Time) {
		return 0
	}
	return r.NextRetryAt.Sub(now)
}

type retryRunKey struct{}

// IsRetry reports whether a step runs as the retry the engine scheduled after a failure (or as
// the probe of a Failed object), rather than for the first time or as a poll of a waiting step.
// A step that restarts an external process after a failure (Gardener's operation=retry) does so
// only on such a run, so the restarts follow the step's backoff.
func IsRetry(ctx context.Context) bool {
	v, _ := ctx.Value(retryRunKey{}).(bool)
	return v
}

// idle reports whether a finished object has nothing to do yet: it is being deleted (its last
// step let it go), or its next periodic re-check is not due.
func (e *Engine[T]) idle(obj T, st *pass, now time.Time) (decision, bool) {
	if !obj.GetDeletionTimestamp().IsZero() {
		return decision{}, true
	}
	due := e.recheckDue(obj, st)
	if st.Step.Deadline != nil && st.Step.Deadline.Before(&metav1.Time{Time: due}) {
		due = st.Step.Deadline.Time
	}
	if now.Before(due) {
		return decision{after: due.Sub(now), background: true}, true
	}
	return decision{}, false
}

// apply turns a step's outcome into the object's next state.
func (e *Engine[T]) apply(obj T, st *pass, s Step[T], out Outcome, now time.Time) decision {
	switch out.kind {
	case KindNext:
		if !slices.Contains(s.Next, out.next) {
			return e.fail(obj, st, s, retry.Terminal("IllegalTransition",
				fmt.Errorf("step %s may not move to %q", s.Name, out.next)), now)
		}
		e.succeed(obj, st, s, now)
		e.enter(st, out.next, now)
		return decision{after: e.cfg.advance, moved: true}
	case KindDone:
		return e.done(obj, st, s, out, now)
	case KindWait:
		return e.wait(obj, st, s, out, now)
	default:
		err := out.err
		if err == nil {
			err = retry.Transient("InvalidOutcome", errors.New("step returned no outcome"))
		}
		return e.fail(obj, st, s, err, now)
	}
}

// done ends the machine: Ready, and checked again after the re-check interval or when the step
// asked for it.
func (e *Engine[T]) done(obj T, st *pass, s Step[T], out Outcome, now time.Time) decision {
	e.succeed(obj, st, s, now)
	e.enter(st, StepDone, now)
	if !obj.GetDeletionTimestamp().IsZero() {
		return decision{}
	}
	st.State = fsmv1.StateReady
	st.conclude(concludedDone, "")
	after := e.resyncFor(obj)
	if out.poll > 0 && out.poll < after {
		// For the Done step, the deadline is when the object is checked again.
		after = out.poll
		st.Step.Deadline = ptrTime(ceilSecond(now.Add(after)))
	}
	return decision{after: after, background: true}
}

// wait keeps the object in a waiting step until its deadline. Waiting is not success: a retry
// record stays until the step moves on, so a step that keeps starting an external process that
// keeps failing spends its budget (its next retry time is cleared, since the retry ran).
func (e *Engine[T]) wait(obj T, st *pass, s Step[T], out Outcome, now time.Time) decision {
	poll := jitter(out.poll, e.cfg.pollSpread, e.cfg.rand())
	if rec := st.Retry; st.State == fsmv1.StateFailed && rec != nil {
		rec.LastFailure = metav1.NewTime(stamp(now))
		if rec.Class == string(retry.ClassTimeout) {
			// A probe of a step that timed out: still waiting is still stuck.
			rec.NextRetryAt = ptrTime(ceilSecond(now.Add(e.cfg.probeInterval)))
			return decision{after: e.cfg.probeInterval}
		}
		// A probe that started the external process again: stay Failed, and watch it at the
		// poll interval until the step moves on (recovery) or fails (the next probe in an hour).
		rec.NextRetryAt = ptrTime(ceilSecond(now.Add(poll)))
		return decision{after: poll}
	}
	if st.Retry != nil {
		st.Retry.NextRetryAt = nil
	}
	if s.Deadline > 0 {
		deadline := st.Step.EnteredAt.Add(s.Deadline)
		if !now.Before(deadline) && e.cfg.gate != nil && !e.cfg.gate.Open() {
			// What the step waits for may be stuck only because the dependency is down: the
			// deadline is extended by the pause.
			return e.pause(obj, st, s, retry.Classification{Class: retry.ClassPaused, Reason: ReasonDependencyDown},
				fmt.Errorf("the deadline of %s passed while a shared dependency is unavailable", s.Deadline), now)
		}
		if !now.Before(deadline) {
			return e.fail(obj, st, s, retry.Timeout("DeadlineExceeded",
				fmt.Errorf("no progress within %s: %s", s.Deadline, out.why)), now)
		}
		st.Step.Deadline = ptrTime(deadline)
		poll = min(poll, deadline.Sub(now))
	}
	st.conclude(concludedWaiting, out.why)
	return decision{after: poll}
}

// succeed ends a failure series of the step: the retry record goes, a Failed object recovers.
func (e *Engine[T]) succeed(obj T, st *pass, s Step[T], now time.Time) {
	if st.State == fsmv1.StateFailed {
		e.cfg.recorder.Event(obj, corev1.EventTypeNormal, EventRecovered,
			fmt.Sprintf("Step %s succeeded again: no longer failed", s.Name))
		st.State = e.activeState(obj)
		st.Step.EnteredAt = metav1.NewTime(stamp(now))
	}
	st.Retry = nil
}

// fail classifies err and decides: retry soon (conflict), retry with backoff, or Failed.
func (e *Engine[T]) fail(obj T, st *pass, s Step[T], err error, now time.Time) decision {
	c := retry.Classify(err)
	if c.Class == retry.ClassPaused {
		return e.pause(obj, st, s, c, err, now)
	}
	if st.State != fsmv1.StateFailed {
		e.count(func(m *Metrics) { m.failures.WithLabelValues(e.m.Name, s.Name, string(c.Class)).Inc() })
	}
	rec := st.Retry
	if rec == nil || rec.Step != s.Name {
		rec = &fsmv1.RetryStatus{Step: s.Name, FirstFailure: metav1.NewTime(stamp(now))}
		st.Retry = rec
	}
	policy := e.m.policy(s)
	rec.Class, rec.Reason, rec.Limit = string(c.Class), c.Reason, policy.MaxAttempts
	rec.Message = retry.Sanitize(err.Error(), e.cfg.maxMessage)
	rec.LastFailure = metav1.NewTime(stamp(now))

	if st.State == fsmv1.StateFailed {
		// A failed probe: stay Failed, try again after the probe interval.
		rec.NextRetryAt = ptrTime(ceilSecond(now.Add(e.cfg.probeInterval)))
		return decision{after: e.cfg.probeInterval}
	}
	switch c.Class {
	case retry.ClassConflict:
		if rec.Conflicts < e.cfg.conflictLimit {
			rec.Conflicts++
			delay := time.Duration(float64(e.cfg.conflictDelay) * e.cfg.rand())
			rec.NextRetryAt = ptrTime(now.Add(delay))
			return decision{after: delay}
		}
		// A conflict storm: from here on it spends the budget like a transient error.
	case retry.ClassTerminal, retry.ClassTimeout:
		// The Ready condition's reason says which: the user must act, or the step timed out.
		return e.markFailed(obj, st, now)
	}
	rec.Conflicts = 0
	rec.Attempt++
	if policy.Exhausted(rec.Attempt, rec.FirstFailure.Time, now) {
		return e.markFailed(obj, st, now)
	}
	next := ceilSecond(policy.NextRetry(rec.Attempt, now, e.cfg.rand(), c.RetryAfter))
	rec.NextRetryAt = ptrTime(next)
	if st.State == fsmv1.StateReady {
		st.State = fsmv1.StatePending
	}
	// The event says what the Ready condition says.
	ready := st.conclude(concludedRetrying, "")
	e.cfg.recorder.Event(obj, corev1.EventTypeWarning, EventStepFailed, ready.message)
	return decision{after: next.Sub(now)}
}

// pause holds the step until the shared dependency is back, spending no attempt: the retry record
// keeps its attempt count and notes when the pause began. A Failed object stays as it is, so its
// alert keeps its identity; its probe runs once the dependency is back.
func (e *Engine[T]) pause(obj T, st *pass, s Step[T], c retry.Classification, err error, now time.Time) decision {
	rec := st.Retry
	if st.State == fsmv1.StateFailed && rec != nil {
		wait := max(c.RetryAfter, time.Second) + time.Duration(float64(time.Second)*e.cfg.rand())
		rec.NextRetryAt = ptrTime(ceilSecond(now.Add(wait)))
		return decision{after: wait}
	}
	if rec == nil || rec.Step != s.Name {
		rec = &fsmv1.RetryStatus{Step: s.Name, FirstFailure: metav1.NewTime(stamp(now))}
		st.Retry = rec
	}
	rec.Class, rec.Reason, rec.Limit, rec.Conflicts = string(c.Class), c.Reason, e.m.policy(s).MaxAttempts, 0
	rec.Message = retry.Sanitize(err.Error(), e.cfg.maxMessage)
	if rec.PausedAt == nil {
		rec.PausedAt = ptrTime(stamp(now))
		rec.LastFailure = metav1.NewTime(stamp(now))
		e.cfg.recorder.Event(obj, corev1.EventTypeNormal, EventPaused,
			fmt.Sprintf("Step %s paused until a shared dependency is back, spending no attempt: %s", s.Name, rec.Message))
	}
	if st.State == fsmv1.StateReady {
		st.State = fsmv1.StatePending
	}
	st.conclude(concludedPaused, "")
	if e.cfg.gate == nil {
		wait := max(c.RetryAfter, time.Second)
		rec.NextRetryAt = ptrTime(ceilSecond(now.Add(wait)))
		return decision{after: wait}
	}
	rec.NextRetryAt = nil
	return decision{after: max(e.cfg.gate.Wait(client.ObjectKeyFromObject(obj).String()), time.Second)}
}

// pausedFor returns how long a paused step must still wait: what the gate says, or without a
// gate, until the persisted next retry time (see untilRetry).
func (e *Engine[T]) pausedFor(obj T, r *fsmv1.RetryStatus, now time.Time) time.Duration {
	if e.cfg.gate != nil {
		return e.cfg.gate.Wait(client.ObjectKeyFromObject(obj).String())
	}
	return e.untilRetry(r, now)
}

// resume ends a pause: its length is added to the first failure (the budget's duration) and to
// the step's start (its deadline), so the outage counts against neither. A step that had not
// failed before the pause has no retry record left; one that had runs now as its retry.
func (e *Engine[T]) resume(st *pass, now time.Time) {
	r := st.Retry
	paused := stamp(now).Sub(r.PausedAt.Time)
	r.FirstFailure = metav1.NewTime(r.FirstFailure.Add(paused))
	switch {
	case st.Step.Name == r.Step && r.Reason == ReasonDependencyDown:
		// A wait whose deadline passed during the outage: what it waits for may have been stuck
		// only because the dependency was down, so it gets its whole deadline again.
		st.Step.EnteredAt = metav1.NewTime(stamp(now))
	case st.Step.Name == r.Step:
		st.Step.EnteredAt = metav1.NewTime(st.Step.EnteredAt.Add(paused))
	}
	r.PausedAt = nil
	r.NextRetryAt = ptrTime(stamp(now))
	if r.Attempt == 0 {
		st.Retry = nil
	}
}

// markFailed ends the retries of the step: the object is Failed, and a probe runs once per probe
// interval until the world, the spec or a manual retry changes.
func (e *Engine[T]) markFailed(obj T, st *pass, now time.Time) decision {
	rec := st.Retry
	st.State = fsmv1.StateFailed
	rec.NextRetryAt = ptrTime(ceilSecond(now.Add(e.cfg.probeInterval)))
	ready := st.conclude(concludedFailed, "")
	e.cfg.recorder.Event(obj, corev1.EventTypeWarning, ready.reason, ready.message)
	e.count(func(m *Metrics) { m.exhausted.WithLabelValues(e.m.Name, rec.Step, rec.Class).Inc() })
	return decision{after: e.cfg.probeInterval}
}

// restart enters a step afresh, forgetting the retry record and any failure.
func (e *Engine[T]) restart(st *pass, step string, state fsmv1.State, now time.Time) {
	st.Retry = nil
	st.State = state
	e.enter(st, step, now)
}

// enter moves the object to a step; the Ready condition of an object on its way says which.
func (e *Engine[T]) enter(st *pass, step string, now time.Time) {
	st.Step = &fsmv1.StepStatus{Name: step, EnteredAt: metav1.NewTime(stamp(now))}
	st.conclude(concludedMoved, "")
}

// activeState is the state of an object that is neither Ready nor Failed.
func (e *Engine[T]) activeState(obj T) fsmv1.State {
	if !obj.GetDeletionTimestamp().IsZero() {
		return fsmv1.StateTerminating
	}
	return fsmv1.StatePending
}

// resyncFor spreads the periodic re-check of Ready objects by ±10%, fixed per object.
func (e *Engine[T]) resyncFor(obj T) time.Duration {
	return time.Duration(float64(e.cfg.resync) * (0.9 + 0.2*uidFraction(obj)))
}

// uidFraction maps an object's uid to [0,1), the same for every process. A cryptographic hash
// spreads uids that differ in one character as widely as random ones.
func uidFraction(obj client.Object) float64 {
	sum := sha256.Sum256([]byte(obj.GetUID()))
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / float64(1<<53)
}

// recheckDue is when a Ready object is checked again: one interval after its last re-check.
// A quiet re-check leaves no trace in the status, so the engine knows only its own. The status
// says when the object entered Done. When that was before this process started, the first
// re-check here is spread over one interval from the start, by uid. So a restarted manager
// does not re-check a whole fleet at once.
func (e *Engine[T]) recheckDue(obj T, st *pass) time.Time {
	entered := st.Step.EnteredAt.Time
	if v, ok := e.quiet.Load(client.ObjectKeyFromObject(obj)); ok {
		if c := v.(quietCheck); c.uid == obj.GetUID() && c.at.After(entered) {
			return c.at.Add(e.resyncFor(obj))
		}
	}
	due := entered.Add(e.resyncFor(obj))
	if entered.Before(stamp(e.created)) {
		first := e.created.Add(time.Duration(float64(e.cfg.resync) * uidFraction(obj)))
		if first.After(due) {
			return first
		}
	}
	return due
}

func (e *Engine[T]) count(f func(*Metrics)) {
	if e.cfg.metrics != nil {
		f(e.cfg.metrics)
	}
}

func (e *Engine[T]) syncMetrics(obj T, st *fsmv1.EngineStatus) {
	if e.cfg.objects == nil {
		return
	}
	var id prometheus.Labels
	if e.cfg.objectLabels != nil {
		id = e.cfg.objectLabels(obj)
	}
	var deadline float64
	if st.Step != nil {
		deadline = e.steps[st.Step.Name].Deadline.Seconds()
	}
	e.cfg.objects.sync(e.seriesKey(client.ObjectKeyFromObject(obj)), id, st, deadline)
}

// seriesKey identifies an object's series among those of every engine sharing the metrics: two
// objects of the same name driven by two machines have series of their own.
func (e *Engine[T]) seriesKey(key types.NamespacedName) string {
	return e.m.Name + "/" + key.String()
}

// jitter spreads a poll interval by ±spread, a fraction (WithPollSpread).
// Waiting objects then do not poll in lockstep.
func jitter(d time.Duration, spread, rnd float64) time.Duration {
	return time.Duration(float64(d) * (1 - spread + 2*spread*rnd))
}

// stamp truncates a time to what the status keeps (RFC 3339, whole seconds).
func stamp(t time.Time) time.Time { return t.Truncate(time.Second) }

// ceilSecond rounds a time up to a whole second, so a persisted retry time is never earlier than
// the one decided.
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
