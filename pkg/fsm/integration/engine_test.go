package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if env, err = testenv.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := env.CreateNamespace(ctx, "kcp-system"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// world is what the example step talks to: per object, whether the next call fails, and when
// each call happened.
type world struct {
	mu    sync.Mutex
	fail  map[string]bool
	calls map[string][]time.Time
}

func newWorld() *world { return &world{fail: map[string]bool{}, calls: map[string][]time.Time{}} }

func (w *world) setFailing(name string, failing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fail[name] = failing
}

func (w *world) call(name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[name] = append(w.calls[name], time.Now())
	if w.fail[name] {
		return retry.Transient("BackendUnavailable", errors.New("backend unavailable"))
	}
	return nil
}

func (w *world) callsOf(name string) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.calls[name]...)
}

// policy retries every 4s, three attempts in all, without jitter so the test knows the times.
var policy = retry.Policy{Initial: 4 * time.Second, Factor: 1, Cap: 4 * time.Second, MaxAttempts: 3, Jitter: 0}

// exampleSeries are the example controller's series about each object.
var exampleSeries = fsm.ObjectSeries{
	Namespace:    "example",
	Failed:       fsm.Series{Name: "object_failed", Help: "1 while an object is Failed."},
	Retrying:     fsm.Series{Name: "object_retrying", Help: "The attempt of an object's retried step."},
	StepEntered:  fsm.Series{Name: "object_step_entered_timestamp_seconds", Help: "When an object entered its step."},
	StepDeadline: fsm.Series{Name: "object_step_deadline_seconds", Help: "How long an object's step may wait."},
	Labels:       []string{"id", "name"},
	StepLabels:   []string{"id"},
}

// exampleSteps are the example controller's step metrics.
var exampleSteps = fsm.StepSeries{
	Namespace: "example",
	Duration:  fsm.Series{Name: "fsm_step_duration_seconds", Help: "Time a step's Run took."},
	Failures:  fsm.Series{Name: "fsm_step_failures_total", Help: "Failed step runs."},
	Retries:   fsm.Series{Name: "fsm_retries_total", Help: "Step runs that retried a failure."},
	Exhausted: fsm.Series{Name: "fsm_retries_exhausted_total", Help: "Steps that ended Failed."},
}

// startManager runs the example controller, with its metrics registered with reg, until the
// returned stop is called.
func startManager(t *testing.T, w *world, reg *prometheus.Registry) (stop func()) {
	t.Helper()
	series, err := fsm.NewObjectMetrics(reg, exampleSeries)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := fsm.NewMetrics(reg, exampleSteps)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Client.Scheme(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	machine := fsm.Machine[*infrav1.Runtime]{
		Name:  "example",
		Start: "CallBackend",
		Steps: []fsm.Step[*infrav1.Runtime]{{
			Name:   "CallBackend",
			Policy: policy,
			Run: func(_ context.Context, rt *infrav1.Runtime) fsm.Outcome {
				if err := w.call(rt.Name); err != nil {
					return fsm.Fail(err)
				}
				return fsm.Done()
			},
		}},
	}
	engine, err := fsm.New(machine,
		fsm.WithRecorder(fsm.EventsRecorder(mgr.GetEventRecorder("example-controller"))),
		fsm.WithMetrics(steps),
		fsm.WithProbeInterval(time.Hour),
		fsm.WithObjectMetrics(series, func(o client.Object) prometheus.Labels {
			return prometheus.Labels{"id": o.GetLabels()[infrav1.LabelRuntimeID], "name": o.GetName()}
		}),
		fsm.WithRetryAnnotation(infrav1.RetryRequestedAtAnnotation),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("example").
		For(&infrav1.Runtime{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Complete(fsm.NewReconciler(mgr.GetClient(), engine, func() *infrav1.Runtime { return &infrav1.Runtime{} }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

func newRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	objs, err := testenv.ReadObjects(testenv.FixturesDir() + "/upstream-runtimes/aws.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := env.Client.Scheme().Convert(objs[0], rt, nil); err != nil {
		t.Fatal(err)
	}
	rt.Name = name
	rt.Labels[infrav1.LabelRuntimeID] = "id-" + name
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), rt) })
	return rt
}

// get reads the Runtime from the API server.
func get(ctx context.Context, name string) (*infrav1.Runtime, error) {
	rt := &infrav1.Runtime{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: "kcp-system", Name: name}, rt)
	return rt, err
}

// waitFor polls the stored Runtime until cond holds.
func waitFor(t *testing.T, name string, timeout time.Duration, what string, cond func(*infrav1.Runtime) bool) *infrav1.Runtime {
	t.Helper()
	var last *infrav1.Runtime
	err := testenv.Eventually(t.Context(), timeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		rt, err := get(ctx, name)
		if err != nil {
			return false, err
		}
		last = rt
		return cond(rt), nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last status: %+v", what, err, last.Status)
	}
	return last
}

// TestRetryRecordSurvivesManagerRestart: the first manager records a failure and stops; a new
// manager does not act before the persisted next retry time and continues the attempt count.
func TestRetryRecordSurvivesManagerRestart(t *testing.T) {
	w := newWorld()
	w.setFailing("restart", true)
	stop := startManager(t, w, prometheus.NewRegistry())
	newRuntime(t, "restart")

	rt := waitFor(t, "restart", 30*time.Second, "first failure recorded", func(rt *infrav1.Runtime) bool {
		return rt.Status.Retry != nil && rt.Status.Retry.Attempt == 1
	})
	stop()
	nextRetry := rt.Status.Retry.NextRetryAt.Time
	callsBefore := len(w.callsOf("restart"))
	if callsBefore != 1 {
		t.Fatalf("the first manager called the backend %d times, want 1", callsBefore)
	}

	stop = startManager(t, w, prometheus.NewRegistry())
	defer stop()
	rt = waitFor(t, "restart", 30*time.Second, "second failure recorded", func(rt *infrav1.Runtime) bool {
		return rt.Status.Retry != nil && rt.Status.Retry.Attempt == 2
	})
	calls := w.callsOf("restart")
	if len(calls) != 2 {
		t.Fatalf("backend calls: got %d, want 2 (the new manager retried early or twice)", len(calls))
	}
	if calls[1].Before(nextRetry) {
		t.Errorf("the new manager retried at %s, before the persisted next retry %s", calls[1].Format(time.RFC3339Nano), nextRetry.Format(time.RFC3339))
	}
	if rt.Status.Retry.FirstFailure.After(calls[0]) {
		t.Errorf("first failure moved to %s: the budget was reset", rt.Status.Retry.FirstFailure)
	}

	w.setFailing("restart", false)
	rt = waitFor(t, "restart", 30*time.Second, "Ready after the backend recovered", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady
	})
	if rt.Status.Retry != nil {
		t.Errorf("a Ready runtime kept its retry record: %+v", rt.Status.Retry)
	}
}

// TestExhaustionIsVisibleAndRecoveryClearsIt: a step that keeps failing ends Failed with the
// RetriesExhausted reason, a Warning event and a failed series; a manual retry that
// succeeds leaves Failed and removes the series.
func TestExhaustionIsVisibleAndRecoveryClearsIt(t *testing.T) {
	w := newWorld()
	w.setFailing("exhaust", true)
	reg := prometheus.NewRegistry()
	stop := startManager(t, w, reg)
	defer stop()
	newRuntime(t, "exhaust")

	rt := waitFor(t, "exhaust", 60*time.Second, "Failed", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateFailed
	})
	ready := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady)
	if ready == nil || ready.Reason != infrav1.ReasonRetriesExhausted {
		t.Errorf("Ready condition: got %+v, want reason %s", ready, infrav1.ReasonRetriesExhausted)
	}
	if got := len(w.callsOf("exhaust")); got != int(policy.MaxAttempts) {
		t.Errorf("backend calls: got %d, want %d", got, policy.MaxAttempts)
	}
	err := testenv.Eventually(t.Context(), 10*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		events := &eventsv1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace("kcp-system")); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "exhaust" && e.Reason == infrav1.ReasonRetriesExhausted && e.Type == "Warning" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no Warning event RetriesExhausted: %v", err)
	}
	if got := gauge(t, reg, "example_object_failed", "id-exhaust"); got != 1 {
		t.Errorf("failed series: got %v, want 1", got)
	}

	w.setFailing("exhaust", false)
	rt.Annotations = map[string]string{infrav1.RetryRequestedAtAnnotation: time.Now().UTC().Format(time.RFC3339)}
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "exhaust", 30*time.Second, "Ready after the manual retry", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady && rt.Status.RetryRequestedAt == rt.Annotations[infrav1.RetryRequestedAtAnnotation]
	})
	if got := gauge(t, reg, "example_object_failed", "id-exhaust"); got != -1 {
		t.Errorf("failed series after recovery: got %v, want it gone", got)
	}
}

// gauge returns the value of the series of a metric with the object's id, or -1 when none exists.
func gauge(t *testing.T, reg *prometheus.Registry, name, id string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "id" && l.GetValue() == id {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}
