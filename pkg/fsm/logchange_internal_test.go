package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// TestLogChange: a call logs what changed from the status summarized before it: the step
// entered, a new failure once with its retry, Failed, a recovery; a call that changed none of
// them logs nothing.
func TestLogChange(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	next := metav1.NewTime(t0.Add(2 * time.Minute))
	status := func(state fsmv1.State, step string, failed *metav1.Time) *fsmv1.EngineStatus {
		s := &fsmv1.EngineStatus{State: state, Step: &fsmv1.StepStatus{Name: step}}
		if failed != nil {
			s.Retry = &fsmv1.RetryStatus{Step: step, Attempt: 1, Limit: 3, LastFailure: *failed, NextRetryAt: &next}
		}
		return s
	}
	for _, tc := range []struct {
		name          string
		before, after *fsmv1.EngineStatus
		want          []string
	}{
		{name: "nothing changed", before: status(fsmv1.StateReady, "Done", nil), after: status(fsmv1.StateReady, "Done", nil)},
		{name: "entered a step", before: status(fsmv1.StateReady, "Done", nil), after: status(fsmv1.StatePending, "ApplyShoot", nil),
			want: []string{"Entered step"}},
		{name: "first status", before: &fsmv1.EngineStatus{}, after: status(fsmv1.StatePending, "Initialise", nil), want: []string{"Entered step"}},
		{name: "a new failure", before: status(fsmv1.StatePending, "ApplyShoot", nil), after: status(fsmv1.StatePending, "ApplyShoot", &t0),
			want: []string{"Step failed, retry scheduled"}},
		{name: "the same failure again", before: status(fsmv1.StatePending, "ApplyShoot", &t0), after: status(fsmv1.StatePending, "ApplyShoot", &t0)},
		{name: "a later failure", before: status(fsmv1.StatePending, "ApplyShoot", &t0), after: status(fsmv1.StatePending, "ApplyShoot", &t1),
			want: []string{"Step failed, retry scheduled"}},
		{name: "failed", before: status(fsmv1.StatePending, "ApplyShoot", &t0), after: status(fsmv1.StateFailed, "ApplyShoot", &t1),
			want: []string{"Failed: retries end here"}},
		{name: "recovered", before: status(fsmv1.StateFailed, "ApplyShoot", &t1), after: status(fsmv1.StatePending, "WaitForShoot", nil),
			want: []string{"Recovered from Failed", "Entered step"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			log := funcr.New(func(_, args string) {
				_, msg, _ := strings.Cut(args, `"msg"="`)
				msg, _, _ = strings.Cut(msg, `"`)
				got = append(got, msg)
			}, funcr.Options{Verbosity: 1})
			logChange(log, summaryOf(tc.before), tc.after)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
		})
	}
}
