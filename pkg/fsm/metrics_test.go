package fsm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// widgetSeries are the widget API's series, under names and labels of its own.
var widgetSeries = fsm.ObjectSeries{
	Namespace:    "example",
	Failed:       fsm.Series{Name: "widget_failed", Help: "1 while a widget is Failed."},
	Retrying:     fsm.Series{Name: "widget_retrying", Help: "The attempt of a widget's retried step."},
	StepEntered:  fsm.Series{Name: "widget_step_entered_timestamp_seconds", Help: "When a widget entered its step."},
	StepDeadline: fsm.Series{Name: "widget_step_deadline_seconds", Help: "How long a widget's step may wait."},
	Labels:       []string{"widget", "owner"},
	StepLabels:   []string{"widget"},
}

// stepSeries are the step metrics of these tests, named <namespace>_fsm_...
func stepSeries(namespace string) fsm.StepSeries {
	return fsm.StepSeries{
		Namespace: namespace,
		Duration:  fsm.Series{Name: "fsm_step_duration_seconds", Help: "Time a step's Run took."},
		Failures:  fsm.Series{Name: "fsm_step_failures_total", Help: "Failed step runs."},
		Retries:   fsm.Series{Name: "fsm_retries_total", Help: "Step runs that retried a failure."},
		Exhausted: fsm.Series{Name: "fsm_retries_exhausted_total", Help: "Steps that ended Failed."},
	}
}

// newStepMetrics registers the step metrics of stepSeries(namespace) with reg.
func newStepMetrics(t *testing.T, reg prometheus.Registerer, namespace string) *fsm.Metrics {
	t.Helper()
	m, err := fsm.NewMetrics(reg, stepSeries(namespace))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// widgetLabels identifies a widget in its series.
func widgetLabels(o client.Object) prometheus.Labels {
	return prometheus.Labels{"widget": o.GetName(), "owner": o.GetLabels()["owner"]}
}

// failingEngine returns an engine whose one step fails with a terminal error.
func failingEngine(t *testing.T, name, step string, opts ...fsm.Option) *fsm.Engine[*widget] {
	t.Helper()
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: name, Start: step,
		Steps: []fsm.Step[*widget]{{Name: step, Run: func(context.Context, *widget) fsm.Outcome {
			return fsm.Fail(retry.Terminal("InfraUnauthorized", errors.New("denied")))
		}}},
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newWidget() *widget {
	return &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "w-1", Generation: 1, UID: "u",
		Labels: map[string]string{"owner": "team-a"}}}
}

// TestSeriesAreTheCallers fails a widget and reads its series: under the names and labels the
// caller gave, with the engine's step, reason and class beside them; once the object is gone, so
// are they.
func TestSeriesAreTheCallers(t *testing.T) {
	reg := prometheus.NewRegistry()
	series, err := fsm.NewObjectMetrics(reg, widgetSeries)
	if err != nil {
		t.Fatal(err)
	}
	e := failingEngine(t, "widgets", "Build", fsm.WithObjectMetrics(series, widgetLabels))
	w := newWidget()
	e.Reconcile(t.Context(), w)
	if w.Status.State != fsmv1.StateFailed {
		t.Fatalf("state %s, want Failed", w.Status.State)
	}
	want := `# HELP example_widget_failed 1 while a widget is Failed.
# TYPE example_widget_failed gauge
example_widget_failed{class="Terminal",owner="team-a",reason="InfraUnauthorized",step="Build",widget="w-1"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "example_widget_failed", "example_widget_retrying"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "example_widget_step_entered_timestamp_seconds"); n != 1 {
		t.Errorf("%d step-entered series, want 1", n)
	}
	e.Forget(types.NamespacedName{Namespace: "kcp-system", Name: "w-1"})
	if n := testutil.CollectAndCount(reg); n != 0 {
		t.Errorf("%d series left after the widget is gone", n)
	}
}

// TestObjectSeriesAreChecked gives incomplete series: each is refused before anything registers.
func TestObjectSeriesAreChecked(t *testing.T) {
	tests := []struct {
		name   string                    // what is wrong
		change func(s *fsm.ObjectSeries) // breaks widgetSeries
	}{
		{name: "a series without a name", change: func(s *fsm.ObjectSeries) { s.Retrying.Name = "" }},
		{name: "a label of the engine", change: func(s *fsm.ObjectSeries) { s.Labels = append(s.Labels, "step") }},
		{name: "a repeated label", change: func(s *fsm.ObjectSeries) { s.Labels = []string{"widget", "widget"} }},
		{name: "a step label that is no label", change: func(s *fsm.ObjectSeries) { s.StepLabels = []string{"colour"} }},
		{name: "an empty label", change: func(s *fsm.ObjectSeries) { s.Labels = append(s.Labels, "") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := widgetSeries
			s.Labels, s.StepLabels = append([]string(nil), s.Labels...), append([]string(nil), s.StepLabels...)
			tc.change(&s)
			reg := prometheus.NewRegistry()
			if _, err := fsm.NewObjectMetrics(reg, s); err == nil {
				t.Error("no error")
			}
			if _, err := fsm.NewObjectMetrics(reg, widgetSeries); err != nil {
				t.Errorf("the refused series left something registered: %v", err)
			}
		})
	}
}

// TestSeriesAreKeptPerController runs two engines on one set of series, as a manager's
// controllers may, over objects of the same name. When the second engine forgets its object, the
// first one's series stay.
func TestSeriesAreKeptPerController(t *testing.T) {
	reg := prometheus.NewRegistry()
	series, err := fsm.NewObjectMetrics(reg, widgetSeries)
	if err != nil {
		t.Fatal(err)
	}
	opts := []fsm.Option{fsm.WithMetrics(newStepMetrics(t, reg, "example")), fsm.WithObjectMetrics(series, widgetLabels)}
	widgets, gadgets := failingEngine(t, "widgets", "Build", opts...), failingEngine(t, "gadgets", "Assemble", opts...)
	w, g := newWidget(), newWidget()
	for range 2 {
		widgets.Reconcile(t.Context(), w)
		gadgets.Reconcile(t.Context(), g)
	}
	if n := testutil.CollectAndCount(reg, "example_widget_failed"); n != 2 {
		t.Fatalf("%d failed series, want one per object", n)
	}
	gadgets.Forget(types.NamespacedName{Namespace: "kcp-system", Name: "w-1"})
	if n := testutil.CollectAndCount(reg, "example_widget_failed"); n != 1 {
		t.Errorf("the second engine forgot its object and took the first one's failed series with it (%d left)", n)
	}
	widgets.Forget(types.NamespacedName{Namespace: "kcp-system", Name: "w-1"})
	if n := testutil.CollectAndCount(reg, "example_widget_failed"); n != 0 {
		t.Errorf("%d failed series left after both objects are gone", n)
	}
}

// TestStepSeriesAreChecked gives step series without a name or a help text, and names one twice:
// each is refused, and nothing stays registered.
func TestStepSeriesAreChecked(t *testing.T) {
	tests := []struct {
		name   string                  // what is wrong
		change func(s *fsm.StepSeries) // breaks stepSeries
	}{
		{name: "a series without a name", change: func(s *fsm.StepSeries) { s.Retries.Name = "" }},
		{name: "a series without a help text", change: func(s *fsm.StepSeries) { s.Duration.Help = "" }},
		{name: "a name used twice", change: func(s *fsm.StepSeries) { s.Exhausted.Name = s.Failures.Name }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := stepSeries("example")
			tc.change(&s)
			reg := prometheus.NewRegistry()
			if _, err := fsm.NewMetrics(reg, s); err == nil {
				t.Error("no error")
			}
			if _, err := fsm.NewMetrics(reg, stepSeries("example")); err != nil {
				t.Errorf("the refused series left something registered: %v", err)
			}
		})
	}
}
