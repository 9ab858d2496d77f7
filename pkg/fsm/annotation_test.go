package fsm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestManualRetryTakesTheCallersAnnotation fails a widget, then asks for a manual retry under
// several annotations: only the one the engine was given counts.
func TestManualRetryTakesTheCallersAnnotation(t *testing.T) {
	tests := []struct {
		name       string       // the situation
		opts       []fsm.Option // the engine's options
		annotation string       // the annotation set on the Failed widget
		retried    bool         // whether the step runs again at once
	}{
		{name: "the engine's annotation", opts: []fsm.Option{fsm.WithRetryAnnotation(retryAnnotation)},
			annotation: retryAnnotation, retried: true},
		{name: "another annotation", opts: []fsm.Option{fsm.WithRetryAnnotation(retryAnnotation)},
			annotation: "example.test/something-else"},
		{name: "no annotation given to the engine", annotation: retryAnnotation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			var seen []string // status.retryRequestedAt as each run of the step sees it
			e, err := fsm.New(fsm.Machine[*widget]{
				Name: "widgets", Start: "Build",
				Steps: []fsm.Step[*widget]{{Name: "Build", Run: func(_ context.Context, w *widget) fsm.Outcome {
					runs++
					seen = append(seen, w.Status.RetryRequestedAt)
					return fsm.Fail(retry.Terminal("InfraUnauthorized", errors.New("denied")))
				}}},
			}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			w := newWidget()
			e.Reconcile(t.Context(), w)
			if w.Status.State != fsmv1.StateFailed {
				t.Fatalf("state %s, want Failed", w.Status.State)
			}
			w.Annotations = map[string]string{tc.annotation: "2026-01-01T00:05:00Z"}
			e.Reconcile(t.Context(), w)
			if got := runs == 2; got != tc.retried {
				t.Errorf("step ran %d times; retried = %v, want %v", runs, got, tc.retried)
			}
			if got := w.Status.RetryRequestedAt != ""; got != tc.retried {
				t.Errorf("retryRequestedAt = %q; want it echoed only for a retry taken", w.Status.RetryRequestedAt)
			}
			// A step run by a manual retry sees the request it runs for, so it can tell it from
			// one it recorded before.
			if tc.retried && (len(seen) != 2 || seen[1] != "2026-01-01T00:05:00Z") {
				t.Errorf("the step saw retryRequestedAt %q; want the handled request in its run", seen)
			}
		})
	}
}

// TestLogValuesNameTheObject checks that the engine's log lines carry the caller's keys.
func TestLogValuesNameTheObject(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	e := failingEngine(t, "widgets", "Build", fsm.WithLogValues(func(o client.Object) []any {
		return []any{"widgetID", o.GetLabels()["owner"] + "/" + o.GetName()}
	}))
	w := &widget{ObjectMeta: metav1.ObjectMeta{Name: "w-1", Generation: 1, Labels: map[string]string{"owner": "team-a"}}}
	e.Reconcile(ctrl.LoggerInto(t.Context(), log), w)
	if len(lines) == 0 {
		t.Fatal("the engine logged nothing")
	}
	for _, l := range lines {
		if !strings.Contains(l, `"widgetID"="team-a/w-1"`) {
			t.Errorf("log line without the caller's key: %s", l)
		}
	}
}
