package localenv

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// t0 is the time of every case.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// runtimeIn returns a Runtime named name in kcp-system with the status st.
func runtimeIn(name string, st infrav1.RuntimeStatus) *infrav1.Runtime {
	rt := &infrav1.Runtime{Status: st}
	rt.Name, rt.Namespace = name, "kcp-system"
	return rt
}

// pending is a status in step with a Ready condition of reason and message.
func pending(step, reason, msg string) infrav1.RuntimeStatus {
	return infrav1.RuntimeStatus{EngineStatus: infrav1.EngineStatus{
		State: infrav1.StatePending,
		Step:  &infrav1.StepStatus{Name: step},
		Conditions: []metav1.Condition{{
			Type: infrav1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
		}},
	}}
}

// retrying is a status whose step failed attempt times and runs again at next.
func retrying(step string, attempt int32, next time.Time) infrav1.RuntimeStatus {
	st := pending(step, "Retrying", "Step fails")
	st.Retry = &infrav1.RetryStatus{
		Step: step, Attempt: attempt, Limit: 6, Class: "Transient", Reason: "GardenerUnavailable",
		Message: "GardenerUnavailable: Get shoot:\n  503 Service Unavailable", NextRetryAt: &metav1.Time{Time: next},
	}
	return st
}

// ready is the status of a provisioned runtime.
func ready() infrav1.RuntimeStatus {
	return infrav1.RuntimeStatus{EngineStatus: infrav1.EngineStatus{
		State: infrav1.StateReady,
		Step:  &infrav1.StepStatus{Name: "Done"},
		Conditions: []metav1.Condition{{
			Type: infrav1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "All steps succeeded",
		}},
	}}
}

func TestRowOf(t *testing.T) {
	t.Parallel()
	shootFailed := retrying("WaitForShoot", 2, t0.Add(3*time.Second))
	shootFailed.Gardener = &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Create", State: "Failed", Progress: 25}}
	quoted := pending("WaitForShoot", "Waiting", "Step WaitForShoot waits: Create Processing 40%")
	quoted.Gardener = &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Create", State: "Processing", Progress: 40}}
	deleting := ready()
	tests := []struct {
		// name describes the case.
		name string
		// rt is the observed Runtime.
		rt *infrav1.Runtime
		// deleted marks rt as being deleted.
		deleted bool
		// want is the expected row.
		want Row
	}{
		{
			name: "new, no status",
			rt:   runtimeIn("rt", infrav1.RuntimeStatus{}),
			want: Row{Name: "rt", State: "-", Step: "-", Message: "Created; the manager has not picked it up yet"},
		},
		{
			name: "waiting: the Ready condition",
			rt:   runtimeIn("rt", pending("WaitForKubeconfig", "Waiting", "Secret missing")),
			want: Row{Name: "rt", State: "Pending", Step: "WaitForKubeconfig", Message: "Waiting: Secret missing"},
		},
		{
			name: "retrying: the retry record and the shoot operation",
			rt:   runtimeIn("rt", shootFailed),
			want: Row{
				Name: "rt", State: "Pending", Step: "WaitForShoot", Attempt: 2, Limit: 6, NextRetry: t0.Add(3 * time.Second),
				Message: "Transient/GardenerUnavailable: Get shoot: 503 Service Unavailable; shoot Create Failed 25%",
			},
		},
		{
			name: "an operation the message quotes is not repeated",
			rt:   runtimeIn("rt", quoted),
			want: Row{Name: "rt", State: "Pending", Step: "WaitForShoot", Message: "Waiting: Step WaitForShoot waits: Create Processing 40%"},
		},
		{
			name:    "deleting before the manager has said so",
			rt:      runtimeIn("rt", deleting),
			deleted: true,
			want:    Row{Name: "rt", State: "Deleting", Step: "Done", Message: "Ready: All steps succeeded"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.deleted {
				tc.rt.DeletionTimestamp = &metav1.Time{Time: t0}
			}
			if got := RowOf(tc.rt); !got.Equal(tc.want) {
				t.Errorf("RowOf: got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRowFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		// name describes the case.
		name string
		// row is the row to format at t0.
		row Row
		// want is the expected line.
		want string
	}{
		{
			name: "no retry",
			row:  Row{Name: "sample-aws", State: "Pending", Step: "WaitForShoot", Message: "Waiting: Create Processing 40%"},
			want: "sample-aws           Pending     WaitForShoot           -        -           Waiting: Create Processing 40%",
		},
		{
			name: "retry in a few seconds, multi-line message collapsed",
			row:  Row{Name: "sample-gcp", State: "Pending", Step: "ApplyShoot", Attempt: 2, Limit: 6, NextRetry: t0.Add(3420 * time.Millisecond), Message: "Transient/ServerError:\n  500"},
			want: "sample-gcp           Pending     ApplyShoot             2/6      in 3.4s     Transient/ServerError: 500",
		},
		{
			name: "retry later, rounded to seconds",
			row:  Row{Name: "x", State: "Pending", Step: "ApplyShoot", Attempt: 5, Limit: 6, NextRetry: t0.Add(29600 * time.Millisecond)},
			want: "x                    Pending     ApplyShoot             5/6      in 30s      ",
		},
		{
			name: "retry due",
			row:  Row{Name: "x", State: "Failed", Step: "WaitForShoot", Attempt: 6, Limit: 6, NextRetry: t0.Add(-time.Second)},
			want: "x                    Failed      WaitForShoot           6/6      now         ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.row.Format(t0); got != tc.want {
				t.Errorf("Format:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRowFormatShortensMessages(t *testing.T) {
	t.Parallel()
	line := Row{Name: "x", State: "Pending", Step: "s", Message: strings.Repeat("é", 500)}.Format(t0)
	msg := line[strings.LastIndex(line, " ")+1:]
	if n := len([]rune(msg)); n != maxMessage || !strings.HasSuffix(msg, "…") {
		t.Errorf("message: got %d runes ending %q, want %d ending with …", n, msg[len(msg)-3:], maxMessage)
	}
}

// TestRowOfKeepsTheShootOperationVisible: a long retry message is cut before the shoot's
// operation, so a change of its progress shows, and one the line cannot show is no change.
func TestRowOfKeepsTheShootOperationVisible(t *testing.T) {
	t.Parallel()
	st := retrying("WaitForShoot", 1, t0)
	st.Retry.Message = strings.Repeat("not found ", 30)
	st.Gardener = &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Create", State: "Processing", Progress: 20}}
	at20 := RowOf(runtimeIn("rt", st))
	if n := len([]rune(at20.Message)); n > maxMessage || !strings.HasSuffix(at20.Message, "…; shoot Create Processing 20%") {
		t.Errorf("message (%d runes): got %q", n, at20.Message)
	}
	st.Gardener.LastOperation.Progress = 40
	at40 := RowOf(runtimeIn("rt", st))
	if at40.Equal(at20) {
		t.Errorf("progress 20%% and 40%% give equal rows")
	}
	st.Retry.Message += "and more beyond the cut"
	if longer := RowOf(runtimeIn("rt", st)); !longer.Equal(at40) {
		t.Errorf("a change beyond the cut makes another row: %q", longer.Message)
	}
}

func TestHeaderAlignsWithRows(t *testing.T) {
	t.Parallel()
	header := Header()
	line := "03:04:05 " + Row{Name: "n", State: "s", Step: "p", Message: "m"}.Format(t0)
	for _, col := range []string{"STATE", "STEP", "ATTEMPT", "NEXT-RETRY", "REASON/MESSAGE"} {
		i := strings.Index(header, col)
		if i < 0 || i >= len(line) || line[i-1] != ' ' || line[i] == ' ' {
			t.Errorf("column %s starts at %d in the header; the row has %q there", col, i, line[max(0, i-1):min(len(line), i+1)])
		}
	}
}

func TestTracker(t *testing.T) {
	t.Parallel()
	// step is one observation (or deletion) and the lines it must print.
	type step struct {
		// at is the time of the observation, after t0.
		at time.Duration
		// rt is the observed Runtime; nil with forget.
		rt *infrav1.Runtime
		// forget deletes the Runtime named forget instead.
		forget string
		// want are substrings of the expected lines, one per line; none means no line.
		want []string
	}
	tests := []struct {
		// name describes the case.
		name string
		// applied are the names applied at t0.
		applied []string
		// steps are the observations in order.
		steps []step
	}{
		{
			name:    "only changes print, a first Ready is timed, a summary when all are Ready",
			applied: []string{"a", "b"},
			steps: []step{
				{at: 0, rt: runtimeIn("a", infrav1.RuntimeStatus{}), want: []string{"a    "}},
				{at: time.Second, rt: runtimeIn("a", infrav1.RuntimeStatus{}), want: nil},
				{at: time.Second, rt: runtimeIn("b", pending("ApplyShoot", "Progressing", "Step ApplyShoot")), want: []string{"ApplyShoot"}},
				{at: 2 * time.Second, rt: runtimeIn("a", retrying("ApplyShoot", 1, t0.Add(5*time.Second))), want: []string{"1/6"}},
				{at: 3 * time.Second, rt: runtimeIn("a", retrying("ApplyShoot", 1, t0.Add(5*time.Second))), want: nil},
				{at: 4 * time.Second, rt: runtimeIn("a", retrying("ApplyShoot", 1, t0.Add(9*time.Second))), want: []string{"1/6"}},
				{at: 12300 * time.Millisecond, rt: runtimeIn("a", ready()), want: []string{"Ready 12.3s after apply; Ready: All steps succeeded"}},
				{at: 13 * time.Second, rt: runtimeIn("a", ready()), want: nil},
				{at: 20 * time.Second, rt: runtimeIn("b", ready()), want: []string{"Ready 20s after apply", "== All 2 runtimes are Ready (apply to Ready: a 12.3s, b 20s)"}},
			},
		},
		{
			name:    "the summary re-arms when a runtime leaves Ready, and Ready is timed once",
			applied: []string{"a"},
			steps: []step{
				{at: time.Second, rt: runtimeIn("a", ready()), want: []string{"Ready 1s after apply", "== All 1 runtimes are Ready"}},
				{at: 2 * time.Second, rt: runtimeIn("a", pending("ApplyShoot", "Progressing", "Spec changed")), want: []string{"Spec changed"}},
				{at: 3 * time.Second, rt: runtimeIn("a", ready()), want: []string{"Ready: All steps succeeded", "== All 1 runtimes are Ready"}},
			},
		},
		{
			name: "a runtime not applied here is not timed; a deleted one leaves the summary",
			steps: []step{
				{at: time.Second, rt: runtimeIn("x", ready()), want: []string{"Ready: All steps succeeded", "== All 1 runtimes are Ready. Ctrl-C"}},
				{at: time.Second, rt: runtimeIn("y", infrav1.RuntimeStatus{}), want: []string{"y   "}},
				{at: 2 * time.Second, forget: "y", want: []string{"Deleted", "== All 1 runtimes are Ready"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker()
			for _, n := range tc.applied {
				tr.Applied("kcp-system", n, t0)
			}
			for i, s := range tc.steps {
				var got []string
				if s.forget != "" {
					got = tr.Forget("kcp-system", s.forget, t0.Add(s.at))
				} else {
					got = tr.Observe(s.rt, t0.Add(s.at))
				}
				if len(got) != len(s.want) {
					t.Fatalf("step %d: got %d lines %q, want %d like %q", i, len(got), got, len(s.want), s.want)
				}
				for j := range got {
					if !strings.Contains(got[j], s.want[j]) {
						t.Errorf("step %d line %d: got %q, want it to contain %q", i, j, got[j], s.want[j])
					}
				}
			}
		})
	}
}

// clusterIn returns a GardenerCluster named name in kcp-system with the engine status st.
func clusterIn(name string, st infrav1.EngineStatus) *infrav1.GardenerCluster {
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = name, "kcp-system"
	gc.Status.EngineStatus = st
	return gc
}

func TestTrackerShowsKubeconfigWorkOnlyWhileItFails(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	tr.Applied("kcp-system", "a", t0)
	steps := []struct {
		gc   *infrav1.GardenerCluster
		want string // a substring of the one expected line; empty means no line
	}{
		{clusterIn("rid-a", pending("EnsureKubeconfig", "Progressing", "Step EnsureKubeconfig").EngineStatus), ""},
		{clusterIn("rid-a", retrying("EnsureKubeconfig", 1, t0.Add(2*time.Second)).EngineStatus), "kubeconfig/rid-a"},
		{clusterIn("rid-a", retrying("EnsureKubeconfig", 1, t0.Add(2*time.Second)).EngineStatus), ""},
		{clusterIn("rid-a", retrying("EnsureKubeconfig", 2, t0.Add(6*time.Second)).EngineStatus), "2/6"},
		{clusterIn("rid-a", ready().EngineStatus), "Ready: All steps succeeded"},
		{clusterIn("rid-a", ready().EngineStatus), ""},
	}
	for i, s := range steps {
		lines := tr.ObserveKubeconfig(s.gc, t0.Add(time.Second))
		switch {
		case s.want == "" && len(lines) != 0:
			t.Errorf("observation %d: got %q, want no line", i, lines)
		case s.want != "" && (len(lines) != 1 || !strings.Contains(lines[0], s.want)):
			t.Errorf("observation %d: got %q, want one line holding %q", i, lines, s.want)
		}
	}
	if lines := tr.Observe(runtimeIn("a", ready()), t0.Add(3*time.Second)); len(lines) != 2 || !strings.Contains(lines[1], "All 1 runtimes are Ready") {
		t.Errorf("the kubeconfig rows must not count as runtimes: got %q", lines)
	}
}
