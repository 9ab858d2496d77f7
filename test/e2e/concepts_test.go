package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"text/template"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// conceptsOut is the directory TestConceptsWalkthrough writes its captures into (docs/concepts);
// the document DIR.md (docs/concepts.md) is then rendered from conceptsTemplate.
var conceptsOut = flag.String("concepts-out", "",
	"directory for what TestConceptsWalkthrough sees at each stage (docs/concepts); DIR.md is rendered from "+conceptsTemplate)

// conceptsTemplate is the template of docs/concepts.md, relative to the repository root.
const conceptsTemplate = "docs/concepts/concepts.md.tmpl"

// The walkthrough's runtime and what its shoot fails with.
const (
	conceptsRuntime = "concepts-quota"
	conceptsCode    = gardencorev1beta1.ErrorInfraQuotaExceeded
	conceptsStep    = runtimectrl.StepWaitForShoot
)

// TestConceptsWalkthrough drives one runtime through the story of docs/concepts.md and asserts
// every stage of it: Gardener fails the shoot's creation with ERR_INFRA_QUOTA_EXCEEDED, the
// WaitForShoot step is retried with backoff (attempts 1 and 2), its budget is exhausted (Failed,
// RetriesExhausted), RuntimeRetriesExhausted pages on-call and the dev team, the quota is raised
// (the simulator's rule goes) and a manual retry is requested with the annotation, the runtime
// is Ready, and the resolved notification reaches both receivers. At each stage it takes a
// consistent snapshot of the Runtime (its status, the printer columns the API server serves for
// kubectl, its events) and of the manager's /metrics; with -concepts-out it writes them, the
// notifications and a timeline into that directory and renders the document from
// conceptsTemplate:
//
//	go test ./test/e2e -run TestConceptsWalkthrough -count=1 -v -args -concepts-out=$PWD/docs/concepts
//
// The walkthrough needs a manager on the address Prometheus scrapes. In file order it runs after
// TestAlerting, whose last scenario stops the suite's manager; it then starts one of its own
// there (see ensureManager).
func TestConceptsWalkthrough(t *testing.T) {
	reason, class, ok := gardener.ErrorCodeReason(conceptsCode)
	if !ok || class != retry.ClassTransient {
		t.Fatalf("%s is %s (known %v), want a transient error", conceptsCode, class, ok)
	}
	ensureManager(t)
	waitForNoInhibition(t)

	w := &walkthrough{reason: reason, base: waitForShootCounters(t, scrapeManager(t))}
	t.Cleanup(func() { removeLifecycleRule(t, conceptsRuntime) })
	w.rt = failingRuntime(t, conceptsRuntime, conceptsCode)
	w.created = time.Now()
	w.mark(w.created, "Runtime "+conceptsRuntime+" created; every Create operation of its shoot fails with "+string(conceptsCode))

	w.retrying(t, "01-first-failure", 1)
	w.retrying(t, "02-backoff", 2)
	failed := w.exhausted(t)
	w.paged(t)
	w.pluginWhilePaged(t)
	requested := w.manualRetry(t, failed)
	w.ready(t)
	w.resolved(t, requested)

	if *conceptsOut != "" && !t.Failed() {
		w.writeYAML(t, "timeline.yaml", w.timeline)
		w.writeFile(t, "stack.txt", []byte(monitoringVersions(t)))
		doc, err := renderConcepts(*conceptsOut)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Clean(*conceptsOut) + ".md"
		if err := os.WriteFile(out, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the captures into %s and the document %s", *conceptsOut, out)
	}
}

// TestConceptsDocIsCurrent checks that docs/concepts.md is what its template renders from the
// committed captures, so that neither is edited without the other.
func TestConceptsDocIsCurrent(t *testing.T) {
	want, err := renderConcepts(filepath.Join(testenv.RepoRoot(), "docs", "concepts"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "concepts.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/concepts.md differs from what %s renders: edit the template, not the document, and run "+
			"go test ./test/e2e -run TestConceptsWalkthrough -count=1 -args -concepts-out=$PWD/docs/concepts", conceptsTemplate)
	}
}

// walkthrough is the state of one TestConceptsWalkthrough run.
type walkthrough struct {
	rt      *infrav1.Runtime
	created time.Time
	// reason is the retry reason the quota error gets.
	reason string
	// base holds the WaitForShoot counters before the runtime existed.
	base counters
	// failedAt is when the test saw the runtime Failed.
	failedAt time.Time
	timeline []timelineEntry
}

// timelineEntry is one line of timeline.yaml.
type timelineEntry struct {
	// After is the time since the Runtime was created, in seconds.
	After string `json:"after"`
	// At is the wall-clock time.
	At time.Time `json:"at"`
	// What happened, or what the test saw.
	What string `json:"what"`
}

// mark adds an entry to the timeline and the test log.
func (w *walkthrough) mark(at time.Time, what string) {
	after := fmt.Sprintf("%.1fs", at.Sub(w.created).Seconds())
	w.timeline = append(w.timeline, timelineEntry{After: after, At: at.UTC(), What: what})
}

// retrying waits until the runtime's step has failed attempt times and checks what the status,
// the printer columns, the events and the metrics say about it.
func (w *walkthrough) retrying(t *testing.T, stage string, attempt int32) {
	t.Helper()
	s := w.await(t, stage, failTimeout, fsm.EventStepFailed, func(rt *infrav1.Runtime) error {
		if r := rt.Status.Retry; r == nil || r.Attempt != attempt || rt.Status.State != infrav1.StatePending {
			return fmt.Errorf("state %s, retry %+v; want Pending at attempt %d", rt.Status.State, r, attempt)
		}
		return nil
	})
	w.mark(s.at, fmt.Sprintf("attempt %d of %d failed (%s); next retry at %s", attempt, attempts, w.reason,
		s.rt.Status.Retry.NextRetryAt.UTC().Format(time.RFC3339)))
	w.checkRetryRecord(t, s)
	if c := meta.FindStatusCondition(s.rt.Status.Conditions, infrav1.ConditionReady); c == nil ||
		c.Status != metav1.ConditionFalse || c.Reason != fsm.ReasonRetrying {
		t.Errorf("%s: Ready condition %+v, want False with reason %s", stage, c, fsm.ReasonRetrying)
	}
	w.checkColumns(t, s, infrav1.StatePending, attempt)
	if v, ok := s.metric("infrastructure_manager_runtime_retrying", w.seriesLabels()); !ok || v != float64(attempt) {
		t.Errorf("%s: runtime_retrying is %v (present %v), want %d", stage, v, ok, attempt)
	}
	if _, ok := s.metric("infrastructure_manager_runtime_failed", map[string]string{"runtime_id": runtimeID(w.rt)}); ok {
		t.Errorf("%s: runtime_failed is set for a runtime that is retrying", stage)
	}
	w.checkCounters(t, s, counters{failures: float64(attempt), retries: float64(attempt - 1)})
}

// checkRetryRecord checks status.retry and the mirrored shoot errors against the quota failure.
func (w *walkthrough) checkRetryRecord(t *testing.T, s snapshot) {
	t.Helper()
	r := s.rt.Status.Retry
	if r.Step != conceptsStep || r.Limit != attempts || r.Class != string(retry.ClassTransient) || r.Reason != w.reason {
		t.Errorf("%s: retry record %+v, want step %s, limit %d, class Transient, reason %s", s.stage, r, conceptsStep, attempts, w.reason)
	}
	if !strings.Contains(r.Message, string(conceptsCode)) {
		t.Errorf("%s: retry message %q does not name %s", s.stage, r.Message, conceptsCode)
	}
	if r.NextRetryAt == nil || !r.NextRetryAt.After(r.LastFailure.Time) {
		t.Errorf("%s: next retry %v is not after the last failure %v", s.stage, r.NextRetryAt, r.LastFailure)
	}
	if !slices.ContainsFunc(s.rt.Status.ShootLastErrors, func(e gardencorev1beta1.LastError) bool {
		return slices.Contains(e.Codes, conceptsCode)
	}) {
		t.Errorf("%s: status.shootLastErrors %+v lack %s", s.stage, s.rt.Status.ShootLastErrors, conceptsCode)
	}
	if s.rt.Status.Step == nil || s.rt.Status.Step.Name != conceptsStep {
		t.Errorf("%s: step %+v, want %s", s.stage, s.rt.Status.Step, conceptsStep)
	}
}

// exhausted waits until the runtime is Failed and checks that its retries ran out in the
// failing step, with the probe an hour later, and what the events and metrics say.
func (w *walkthrough) exhausted(t *testing.T) *infrav1.Runtime {
	t.Helper()
	s := w.await(t, "03-exhausted", failTimeout, infrav1.ReasonRetriesExhausted, func(rt *infrav1.Runtime) error {
		if !isFailed(rt) {
			return fmt.Errorf("state %s, retry %+v; want Failed", rt.Status.State, rt.Status.Retry)
		}
		return nil
	})
	w.failedAt = s.at
	w.mark(s.at, fmt.Sprintf("Failed: attempt %d of %d failed, %s", attempts, attempts, readyReason(s.rt)))
	if got := readyReason(s.rt); got != infrav1.ReasonRetriesExhausted {
		t.Fatalf("Ready reason %s, want %s (retry %+v)", got, infrav1.ReasonRetriesExhausted, s.rt.Status.Retry)
	}
	w.checkRetryRecord(t, s)
	if r := s.rt.Status.Retry; r.Attempt != attempts {
		t.Errorf("attempt %d, want the limit %d", r.Attempt, attempts)
	}
	// A Failed runtime is only probed, once per probe interval.
	if probe := manager.DefaultOptions().FailedProbeInterval; s.rt.Status.Retry.NextRetryAt.Sub(s.rt.Status.Retry.LastFailure.Time) < probe {
		t.Errorf("next retry %v is less than the probe interval %s after the last failure %v", s.rt.Status.Retry.NextRetryAt, probe, s.rt.Status.Retry.LastFailure)
	}
	w.checkColumns(t, s, infrav1.StateFailed, attempts)
	labels := w.seriesLabels()
	labels["class"] = string(retry.ClassTransient)
	if v, ok := s.metric("infrastructure_manager_runtime_failed", labels); !ok || v != 1 {
		t.Errorf("runtime_failed%v is %v (present %v), want 1", labels, v, ok)
	}
	if _, ok := s.metric("infrastructure_manager_runtime_retrying", map[string]string{"runtime_id": runtimeID(w.rt)}); ok {
		t.Errorf("runtime_retrying is still set for a Failed runtime")
	}
	w.checkCounters(t, s, counters{failures: attempts, retries: attempts - 1, exhausted: 1})
	return s.rt
}

// paged waits for RuntimeRetriesExhausted at on-call and at dev-team, checks the alert and that
// Alertmanager routes it to exactly those two, and writes the notifications.
func (w *walkthrough) paged(t *testing.T) {
	t.Helper()
	rule := shippedAlert(t, alertExhausted)
	if rule.Labels["severity"] != "critical" {
		t.Errorf("%s has severity %q, want critical", alertExhausted, rule.Labels["severity"])
	}
	id := runtimeID(w.rt)
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertExhausted, runtimeID: id, status: "firing"}, alertTimeout)
		w.mark(d.at, fmt.Sprintf("%s firing reached %s, %.1fs after the runtime was seen Failed", alertExhausted, r.name, d.at.Sub(w.failedAt).Seconds()))
		checkRuntimeAlert(t, r.name, d.alert, rule, w.rt, map[string]string{
			"step": conceptsStep, "reason": w.reason, "class": string(retry.ClassTransient),
		})
		w.writeNotification(t, "04-paged", r, d)
	}
	alerts, err := amAlerts(t.Context(), sys.amURL, fmt.Sprintf("alertname=%q", alertExhausted), fmt.Sprintf("runtime_id=%q", id))
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("Alertmanager lists %d %s alerts of %s, want 1", len(alerts), alertExhausted, id)
	}
	var names []string
	for _, r := range alerts[0].Receivers {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	if want := []string{devTeam, onCall}; !slices.Equal(names, want) || alerts[0].Status.State != "active" {
		t.Errorf("Alertmanager routes %s to %v (state %s), want %v (active)", alertExhausted, names, alerts[0].Status.State, want)
	}
	assertSilent(t, 0, match{runtimeID: id}, sys.receivers[deadman])
}

// manualRetry raises the quota (the simulator's rule goes), requests a retry with the
// annotation, and checks that the engine echoed it and started the step with a fresh budget.
func (w *walkthrough) manualRetry(t *testing.T, failed *infrav1.Runtime) time.Time {
	t.Helper()
	removeLifecycleRule(t, conceptsRuntime)
	w.mark(time.Now(), "quota raised: the simulator's rule is gone, so Gardener's next operation succeeds")
	requested := time.Now()
	value := requestRetry(t, failed.DeepCopy())
	w.mark(requested, infrav1.RetryRequestedAtAnnotation+"="+value+" set")
	s := w.await(t, "05-retry-requested", failTimeout, fsm.EventRetryRequested, func(rt *infrav1.Runtime) error {
		if rt.Status.RetryRequestedAt != value {
			return fmt.Errorf("status.retryRequestedAt %q, want %q", rt.Status.RetryRequestedAt, value)
		}
		return nil
	})
	w.mark(s.at, "retry request echoed in status.retryRequestedAt; state "+string(s.rt.Status.State))
	if isFailed(s.rt) {
		t.Errorf("still Failed after the retry request was handled (retry %+v)", s.rt.Status.Retry)
	}
	// The budget starts again: no retry record, or one whose first failure is the retry's.
	if r := s.rt.Status.Retry; r != nil && (r.Attempt > 1 || r.FirstFailure.Before(&metav1.Time{Time: requested.Truncate(time.Second)})) {
		t.Errorf("the retry record %+v was not reset by the request at %s", r, requested.Format(time.RFC3339Nano))
	}
	if _, ok := s.metric("infrastructure_manager_runtime_failed", map[string]string{"runtime_id": runtimeID(w.rt)}); ok {
		t.Errorf("runtime_failed is still set after the retry request")
	}
	return requested
}

// ready waits until the runtime is Ready and checks that nothing of the failure is left: no
// retry record, no per-runtime series.
func (w *walkthrough) ready(t *testing.T) {
	t.Helper()
	s := w.await(t, "06-ready", failTimeout, "", func(rt *infrav1.Runtime) error {
		if rt.Status.State != infrav1.StateReady {
			return fmt.Errorf("state %s, step %+v, retry %+v; want Ready", rt.Status.State, rt.Status.Step, rt.Status.Retry)
		}
		return nil
	})
	w.mark(s.at, "Ready")
	if s.rt.Status.Retry != nil || s.rt.Status.Step == nil || s.rt.Status.Step.Name != fsm.StepDone {
		t.Errorf("Ready with step %+v and retry %+v, want step %s and no retry record", s.rt.Status.Step, s.rt.Status.Retry, fsm.StepDone)
	}
	for typ, reason := range map[string]string{infrav1.ConditionReady: fsm.ReasonReady, infrav1.ConditionProvisioned: ""} {
		if c := meta.FindStatusCondition(s.rt.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue || (reason != "" && c.Reason != reason) {
			t.Errorf("condition %s is %+v, want True", typ, c)
		}
	}
	for _, l := range s.metrics {
		if strings.Contains(l, `runtime_id="`+runtimeID(w.rt)+`"`) {
			t.Errorf("a per-runtime series is left after recovery: %s", l)
		}
	}
	if got := waitForShootCounters(t, s.metrics).exhausted - w.base.exhausted; got != 1 {
		t.Errorf("fsm_retries_exhausted_total of %s grew by %v, want 1", conceptsStep, got)
	}
}

// resolved waits for the resolved RuntimeRetriesExhausted at both receivers and checks that the
// incident was one notification each way.
func (w *walkthrough) resolved(t *testing.T, requested time.Time) {
	t.Helper()
	id := runtimeID(w.rt)
	timeout := resolveTimeout(t, shippedAlert(t, alertExhausted))
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertExhausted, runtimeID: id, status: "resolved", since: requested}, timeout)
		w.mark(d.at, fmt.Sprintf("%s resolved reached %s", alertExhausted, r.name))
		w.writeNotification(t, "07-resolved", r, d)
	}
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		for _, status := range []string{"firing", "resolved"} {
			if got := r.find(match{alertname: alertExhausted, runtimeID: id, status: status}); len(got) != 1 {
				t.Errorf("%s: got %d %s notifications for %s, want 1:\n%s", r.name, len(got), status, id, r.dump())
			}
		}
	}
}

// seriesLabels are the labels of the runtime's per-runtime series while its step fails.
func (w *walkthrough) seriesLabels() map[string]string {
	return map[string]string{"runtime_id": runtimeID(w.rt), "runtime_name": w.rt.Name, "shoot": w.rt.Spec.Shoot.Name,
		"step": conceptsStep, "reason": w.reason}
}

// checkColumns checks the printer columns of `kubectl get runtimes`.
func (w *walkthrough) checkColumns(t *testing.T, s snapshot, state infrav1.State, attempt int32) {
	t.Helper()
	want := map[string]string{"State": string(state), "Step": conceptsStep, "Attempt": strconv.Itoa(int(attempt))}
	for col, v := range want {
		if got := s.columns[col]; got != v {
			t.Errorf("%s: column %s is %q, want %q", s.stage, col, got, v)
		}
	}
}

// checkCounters checks how much the WaitForShoot counters grew since the runtime was created.
func (w *walkthrough) checkCounters(t *testing.T, s snapshot, want counters) {
	t.Helper()
	got := waitForShootCounters(t, s.metrics)
	got = counters{failures: got.failures - w.base.failures, retries: got.retries - w.base.retries, exhausted: got.exhausted - w.base.exhausted}
	if got != want {
		t.Errorf("%s: the %s counters grew by %+v, want %+v", s.stage, conceptsStep, got, want)
	}
}

// snapshot is what the test saw of the runtime at one moment: the Runtime did not change while
// the rest was read.
type snapshot struct {
	stage string
	at    time.Time
	rt    *infrav1.Runtime
	// table is `kubectl get runtime` as the API server renders it; columns its cells by name.
	table   string
	columns map[string]string
	events  []eventsv1.Event
	// metrics are the manager's /metrics lines about the runtime and the WaitForShoot counters.
	metrics []string
}

// metric returns the value of the first series of name whose labels include labels.
func (s snapshot) metric(name string, labels map[string]string) (float64, bool) {
	return metricValue(s.metrics, name, labels)
}

// await takes snapshots until reached accepts the Runtime and, unless event is empty, an event
// with that reason about it has been recorded; it writes the snapshot when capturing.
func (w *walkthrough) await(t *testing.T, stage string, timeout time.Duration, event string, reached func(*infrav1.Runtime) error) snapshot {
	t.Helper()
	var s snapshot
	err := testenv.Eventually(t.Context(), timeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		var err error
		if s, err = takeSnapshot(ctx, stage, w.rt); err != nil {
			return false, err
		}
		if err := reached(s.rt); err != nil {
			return false, err
		}
		if event != "" && !slices.ContainsFunc(s.events, func(e eventsv1.Event) bool { return e.Reason == event }) {
			return false, fmt.Errorf("no %s event yet", event)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
	t.Logf("%s: %s after the Runtime was created: state %s, step %s, retry %s", stage, s.at.Sub(w.created).Round(100*time.Millisecond),
		s.rt.Status.State, s.rt.Status.Step.Name, describeRetry(s.rt.Status.Retry))
	w.writeSnapshot(t, s)
	return s
}

func describeRetry(r *infrav1.RetryStatus) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%d/%d %s %s", r.Attempt, r.Limit, r.Class, r.Reason)
}

// takeSnapshot reads the Runtime, its printer columns, its events and the manager's metrics,
// and reads the Runtime again: the snapshot is consistent only when it did not change meanwhile.
func takeSnapshot(ctx context.Context, stage string, rt *infrav1.Runtime) (snapshot, error) {
	s := snapshot{stage: stage, rt: &infrav1.Runtime{}}
	if err := sys.env.Client.Get(ctx, client.ObjectKeyFromObject(rt), s.rt); err != nil {
		return s, err
	}
	s.at = time.Now()
	var err error
	if s.table, s.columns, err = printerColumns(ctx, rt.Name); err != nil {
		return s, err
	}
	if s.events, err = eventsOf(ctx, rt); err != nil {
		return s, err
	}
	text, err := fetch(ctx, "http://"+sys.metricsAddr+"/metrics")
	if err != nil {
		return s, err
	}
	s.metrics = relevantMetrics(text, runtimeID(rt))
	again := &infrav1.Runtime{}
	if err := sys.env.Client.Get(ctx, client.ObjectKeyFromObject(rt), again); err != nil {
		return s, err
	}
	if again.ResourceVersion != s.rt.ResourceVersion {
		return s, errors.New("the Runtime changed while the snapshot was taken")
	}
	return s, nil
}

// printerColumns returns the Runtime as `kubectl get runtime NAME` prints it, which is the table
// the API server renders from the CRD's printer columns, and its cells by column name.
func printerColumns(ctx context.Context, name string) (string, map[string]string, error) {
	cfg := rest.CopyConfig(sys.env.Config)
	cfg.GroupVersion, cfg.APIPath = &infrav1.GroupVersion, "/apis"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("rest client: %w", err)
	}
	raw, err := rc.Get().Namespace(namespace).Resource("runtimes").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("get the table of runtime %s: %w", name, err)
	}
	var tbl metav1.Table
	if err := json.Unmarshal(raw, &tbl); err != nil {
		return "", nil, fmt.Errorf("decode the table of runtime %s: %w", name, err)
	}
	if len(tbl.Rows) != 1 || len(tbl.Rows[0].Cells) != len(tbl.ColumnDefinitions) {
		return "", nil, fmt.Errorf("the table of runtime %s has %d rows, want 1 with a cell per column", name, len(tbl.Rows))
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	columns := map[string]string{}
	var head, row []string
	for i, c := range tbl.ColumnDefinitions {
		// As kubectl prints cells: an absent value is empty.
		cell := ""
		if v := tbl.Rows[0].Cells[i]; v != nil {
			cell = fmt.Sprint(v)
		}
		columns[c.Name] = cell
		head, row = append(head, strings.ToUpper(c.Name)), append(row, cell)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	if err := tw.Flush(); err != nil {
		return "", nil, fmt.Errorf("format the table: %w", err)
	}
	return b.String(), columns, nil
}

// eventsOf returns the events about the Runtime, oldest first.
func eventsOf(ctx context.Context, rt *infrav1.Runtime) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := sys.env.Client.List(ctx, list, client.InNamespace(rt.Namespace)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Runtime" && e.Regarding.Name == rt.Name {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	return out, nil
}

// relevantMetrics returns the series of the runtime and the Transient WaitForShoot counters of
// the Runtime controller, in the order the manager serves them.
func relevantMetrics(text, runtimeID string) []string {
	var out []string
	for l := range strings.Lines(text) {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.Contains(l, `runtime_id="`+runtimeID+`"`) && strings.HasPrefix(l, "infrastructure_manager_runtime_"):
			out = append(out, l)
		case strings.HasPrefix(l, "infrastructure_manager_fsm_") && !strings.HasPrefix(l, "infrastructure_manager_fsm_step_duration_seconds") &&
			strings.Contains(l, `controller="`+runtimectrl.ControllerName+`"`) && strings.Contains(l, `step="`+conceptsStep+`"`) &&
			(!strings.Contains(l, `class="`) || strings.Contains(l, `class="Transient"`)):
			out = append(out, l)
		}
	}
	return out
}

// metricValue returns the value of the first line of name whose labels include labels.
func metricValue(lines []string, name string, labels map[string]string) (float64, bool) {
	for _, l := range lines {
		series, value, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(series, name+"{") {
			continue
		}
		all := true
		for k, v := range labels {
			all = all && strings.Contains(series, k+`="`+v+`"`)
		}
		if !all {
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		return f, err == nil
	}
	return 0, false
}

// counters are the engine's Transient counters of the WaitForShoot step.
type counters struct {
	failures, retries, exhausted float64
}

// waitForShootCounters reads the counters from metrics lines.
func waitForShootCounters(t *testing.T, lines []string) counters {
	t.Helper()
	var c counters
	for name, v := range map[string]*float64{
		"infrastructure_manager_fsm_step_failures_total":     &c.failures,
		"infrastructure_manager_fsm_retries_total":           &c.retries,
		"infrastructure_manager_fsm_retries_exhausted_total": &c.exhausted,
	} {
		labels := map[string]string{"controller": runtimectrl.ControllerName, "step": conceptsStep}
		if name != "infrastructure_manager_fsm_retries_total" {
			labels["class"] = string(retry.ClassTransient)
		}
		value, ok := metricValue(lines, name, labels)
		if !ok {
			t.Fatalf("the manager serves no %s%v (counters are pre-created at 0)", name, labels)
		}
		*v = value
	}
	return c
}

// scrapeManager returns the relevant lines of the manager's /metrics now.
func scrapeManager(t *testing.T) []string {
	t.Helper()
	text, err := fetch(t.Context(), "http://"+sys.metricsAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return relevantMetrics(text, "")
}

// fetch returns the body of a GET that answers 200.
func fetch(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(data), nil
}

// ensureManager makes sure a manager serves /metrics on sys.metricsAddr, where Prometheus
// scrapes it. When the suite's manager has stopped (TestAlerting's ManagerDown stops it, and
// runs first in file order), it starts one with startManager's options there, and stops it when
// the test ends.
func ensureManager(t *testing.T) {
	t.Helper()
	select {
	case <-sys.manager.Done():
	default:
		return
	}
	m, err := stack.RunManager(t.Context(), stack.ManagerOptions{
		Config: sys.env.Config, Garden: sys.sim.RESTConfig(), Options: managerOptions(sys.metricsAddr, sys.metrics), WaitForMetrics: true,
	})
	if m != nil {
		t.Cleanup(func() {
			if err := m.Stop(); err != nil {
				t.Errorf("the walkthrough's manager ended with: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatalf("the walkthrough's manager does not serve its metrics: %v", err)
	}
	t.Logf("the suite's manager has stopped; the walkthrough started its own on %s", sys.metricsAddr)
}

// monitoringVersions returns the first line of `--version` of the Prometheus and the
// Alertmanager the suite runs, one a line.
func monitoringVersions(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, bin := range []string{sys.promBin, sys.amBin} {
		out, err := exec.CommandContext(t.Context(), bin, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", bin, err, out)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		b.WriteString(strings.TrimSpace(first) + "\n")
	}
	return b.String()
}

// waitForNoInhibition waits until Prometheus scrapes the manager and neither alert that mutes
// the per-runtime alerts is pending or firing in Prometheus or active in Alertmanager.
func waitForNoInhibition(t *testing.T) {
	t.Helper()
	sources := `alertname=~"GardenerUnavailable|InfrastructureManagerDown"`
	err := testenv.Eventually(t.Context(), 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if up, err := promQuery(ctx, sys.promURL, fmt.Sprintf(`up{job=%q} == 1`, job)); err != nil || len(up) == 0 {
			return false, errors.Join(err, errors.New("prometheus does not scrape the manager"))
		}
		if pending, err := promQuery(ctx, sys.promURL, "ALERTS{"+sources+"}"); err != nil || len(pending) > 0 {
			return false, errors.Join(err, fmt.Errorf("pending or firing in Prometheus: %v", pending))
		}
		active, err := amAlerts(ctx, sys.amURL, sources)
		if err != nil || len(active) > 0 {
			return false, errors.Join(err, fmt.Errorf("%d active in Alertmanager", len(active)))
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("an alert that would mute the walkthrough's page is still there: %v", err)
	}
}

// statusView is the part of a Runtime the walkthrough shows: the manual-retry annotation and the
// status fields of the contract, with the shoot's last operation and errors.
type statusView struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Status struct {
		State              infrav1.State                    `json:"state"`
		Step               *infrav1.StepStatus              `json:"step,omitempty"`
		Retry              *infrav1.RetryStatus             `json:"retry,omitempty"`
		RetryRequestedAt   string                           `json:"retryRequestedAt,omitempty"`
		Conditions         []metav1.Condition               `json:"conditions,omitempty"`
		ShootLastOperation *gardencorev1beta1.LastOperation `json:"shootLastOperation,omitempty"`
		ShootLastErrors    []gardencorev1beta1.LastError    `json:"shootLastErrors,omitempty"`
	} `json:"status"`
}

// eventView is one event as the walkthrough shows it.
type eventView struct {
	Type      string                `json:"type"`
	Reason    string                `json:"reason"`
	Note      string                `json:"note"`
	EventTime metav1.MicroTime      `json:"eventTime"`
	Series    *eventsv1.EventSeries `json:"series,omitempty"`
}

// writeSnapshot writes the snapshot into the stage's directory when capturing.
func (w *walkthrough) writeSnapshot(t *testing.T, s snapshot) {
	t.Helper()
	if *conceptsOut == "" {
		return
	}
	var v statusView
	v.Metadata.Name = s.rt.Name
	if value, ok := s.rt.Annotations[infrav1.RetryRequestedAtAnnotation]; ok {
		v.Metadata.Annotations = map[string]string{infrav1.RetryRequestedAtAnnotation: value}
	}
	st := s.rt.Status
	v.Status.State, v.Status.Step, v.Status.Retry, v.Status.RetryRequestedAt = st.State, st.Step, st.Retry, st.RetryRequestedAt
	v.Status.Conditions, v.Status.ShootLastOperation, v.Status.ShootLastErrors = st.Conditions, st.ShootLastOperation, st.ShootLastErrors
	w.writeYAML(t, filepath.Join(s.stage, "runtime.yaml"), v)
	events := make([]eventView, 0, len(s.events))
	for _, e := range s.events {
		events = append(events, eventView{Type: e.Type, Reason: e.Reason, Note: e.Note, EventTime: e.EventTime, Series: e.Series})
	}
	w.writeYAML(t, filepath.Join(s.stage, "events.yaml"), events)
	w.writeFile(t, filepath.Join(s.stage, "get.txt"), []byte(s.table))
	w.writeFile(t, filepath.Join(s.stage, "metrics.txt"), []byte(strings.Join(s.metrics, "\n")+"\n"))
}

// notification is one alert as a webhook received it.
type notification struct {
	Receiver   string       `json:"receiver"`
	ReceivedAt time.Time    `json:"receivedAt"`
	Alert      webhookAlert `json:"alert"`
}

// writeNotification writes the alert a receiver got when capturing.
func (w *walkthrough) writeNotification(t *testing.T, stage string, r *receiver, d delivery) {
	t.Helper()
	if *conceptsOut == "" {
		return
	}
	data, err := json.MarshalIndent(notification{Receiver: r.name, ReceivedAt: d.at.UTC(), Alert: d.alert}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	w.writeFile(t, filepath.Join(stage, r.name+".json"), append(data, '\n'))
}

func (w *walkthrough) writeYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	w.writeFile(t, name, data)
}

func (w *walkthrough) writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	path := filepath.Join(*conceptsOut, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// conceptsData is what the template of docs/concepts.md reads besides the captures: the
// durations of production and of this test, from the code and the shipped configuration.
type conceptsData struct {
	// Policy and TestPolicy are the retry policy of every step in production and in the test.
	Policy, TestPolicy retry.Policy
	// Delays and TestDelays are the ceilings of the delays before each retry, attempt 1 first.
	Delays, TestDelays []time.Duration
	// MinWait and MaxWait bound the sum of the production delays before exhaustion.
	MinWait, MaxWait time.Duration
	// Probe is how often a Failed runtime's step is tried again; ShootCreateDeadline bounds
	// WaitForShoot.
	Probe, ShootCreateDeadline time.Duration
	// Rule is RuntimeRetriesExhausted as shipped; TestFor and TestKeepFiringFor as the test runs it.
	Rule                       rulesRule
	TestFor, TestKeepFiringFor time.Duration
	// Route holds the shipped root route's timers (group_wait, group_interval,
	// repeat_interval), TestRoute the test's.
	Route, TestRoute []time.Duration
	TimeScale        int
}

// newConceptsData computes the template's durations.
func newConceptsData() (conceptsData, error) {
	o := manager.DefaultOptions()
	d := conceptsData{Policy: o.Retry, Probe: o.FailedProbeInterval, ShootCreateDeadline: o.ShootCreateDeadline, TimeScale: timeScale,
		TestPolicy: testPolicy()}
	for n := int32(1); n < d.Policy.MaxAttempts; n++ {
		d.Delays = append(d.Delays, d.Policy.Ceiling(n))
		d.MinWait += d.Policy.Delay(n, 0)
		d.MaxWait += d.Policy.Ceiling(n)
	}
	for n := int32(1); n < d.TestPolicy.MaxAttempts; n++ {
		d.TestDelays = append(d.TestDelays, d.TestPolicy.Ceiling(n))
	}
	rules, err := readShippedRules()
	if err != nil {
		return d, err
	}
	var ok bool
	if d.Rule, ok = rules.alert(alertExhausted); !ok {
		return d, fmt.Errorf("the shipped rules have no %s", alertExhausted)
	}
	forDuration, err := parseDuration(d.Rule.For)
	if err != nil {
		return d, err
	}
	keep, err := parseDuration(d.Rule.KeepFiringFor)
	if err != nil {
		return d, err
	}
	d.TestFor, d.TestKeepFiringFor = scaled(forDuration), scaled(keep)
	d.Route, d.TestRoute, err = routeTimers()
	return d, err
}

// routeTimers returns the shipped root route's group_wait, group_interval and repeat_interval,
// and what the test caps them to.
func routeTimers() (shipped, test []time.Duration, err error) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), shippedAlertmanager))
	if err != nil {
		return nil, nil, fmt.Errorf("read shipped alertmanager config: %w", err)
	}
	var cfg struct {
		Route map[string]any `json:"route"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, nil, fmt.Errorf("parse shipped alertmanager config: %w", err)
	}
	for _, k := range []struct {
		key   string
		limit time.Duration
	}{{"group_wait", maxGroupWait}, {"group_interval", maxGroupInterval}, {"repeat_interval", maxRepeatInterval}} {
		s, _ := cfg.Route[k.key].(string)
		d, err := parseDuration(s)
		if err != nil {
			return nil, nil, fmt.Errorf("route %s: %w", k.key, err)
		}
		shipped, test = append(shipped, d), append(test, min(d, k.limit))
	}
	return shipped, test, nil
}

// renderConcepts renders conceptsTemplate with the captures in dir.
func renderConcepts(dir string) ([]byte, error) {
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), conceptsTemplate))
	if err != nil {
		return nil, fmt.Errorf("read the template: %w", err)
	}
	data, err := newConceptsData()
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("concepts").Option("missingkey=error").Funcs(template.FuncMap{
		// file returns a capture, without its last newline.
		"file": func(name string) (string, error) {
			b, err := os.ReadFile(filepath.Join(dir, name))
			return strings.TrimSuffix(string(b), "\n"), err
		},
		"dur": formatDuration,
		// minutes rounds a duration to whole minutes.
		"minutes": func(d time.Duration) int64 { return int64(d.Round(time.Minute) / time.Minute) },
		"mul100":  func(f float64) float64 { return 100 * f },
	}).Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("parse the template: %w", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		return nil, fmt.Errorf("render the template: %w", err)
	}
	return out.Bytes(), nil
}
