package chaos_test

import (
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
)

// The checkers' own tests: synthetic histories, no processes. They run with -short too.

// base is the moment the synthetic histories start.
var base = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// at is base plus seconds.
func at(seconds float64) time.Time { return base.Add(time.Duration(seconds * float64(time.Second))) }

// runtimeAt builds a stored version of chaos-00: in step, entered at entered seconds, with a
// retry record of that step at attempt (none for 0) due at next seconds.
func runtimeAt(rv string, state infrav1.State, step string, entered float64, attempt int32, next float64) *infrav1.Runtime {
	rt := &infrav1.Runtime{}
	rt.Name, rt.ResourceVersion = "chaos-00", rv
	rt.Status.State = state
	rt.Status.Step = &infrav1.StepStatus{Name: step, EnteredAt: metav1.NewTime(at(entered))}
	if attempt > 0 {
		rt.Status.Retry = &infrav1.RetryStatus{Step: step, Attempt: attempt, Limit: 6, Class: "Transient", Reason: "GardenerServerError",
			NextRetryAt: ptrTime(at(next))}
	}
	return rt
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}

// newTestRecorder tracks chaos-00 with shoot chaos-00.
func newTestRecorder() (*recorder, *report) {
	rep := newReport()
	rec := newRecorder(rep, 30*time.Second)
	rec.track("chaos-00", "chaos-00", false, base)
	return rec, rep
}

func TestAttemptInvariant(t *testing.T) {
	tests := []struct {
		name     string
		versions []*infrav1.Runtime
		violated bool
	}{
		{
			name: "counting up is fine",
			versions: []*infrav1.Runtime{
				runtimeAt("1", infrav1.StatePending, "ApplyShoot", 0, 1, 2),
				runtimeAt("2", infrav1.StatePending, "ApplyShoot", 0, 2, 5),
			},
		},
		{
			name: "a stale write that takes an attempt back",
			versions: []*infrav1.Runtime{
				runtimeAt("1", infrav1.StatePending, "ApplyShoot", 0, 2, 5),
				runtimeAt("2", infrav1.StatePending, "ApplyShoot", 0, 1, 2),
			},
			violated: true,
		},
		{
			name: "a retry record that vanishes in the same step",
			versions: []*infrav1.Runtime{
				runtimeAt("1", infrav1.StatePending, "ApplyShoot", 0, 3, 5),
				runtimeAt("2", infrav1.StatePending, "ApplyShoot", 0, 0, 0),
			},
			violated: true,
		},
		{
			name: "the step moved on",
			versions: []*infrav1.Runtime{
				runtimeAt("1", infrav1.StatePending, "ApplyShoot", 0, 3, 5),
				runtimeAt("2", infrav1.StatePending, "WaitForShoot", 6, 0, 0),
			},
		},
		{
			name: "the step was entered again",
			versions: []*infrav1.Runtime{
				runtimeAt("1", infrav1.StatePending, "Initialise", 0, 3, 5),
				runtimeAt("2", infrav1.StatePending, "Initialise", 9, 0, 0),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, rep := newTestRecorder()
			for i, v := range tc.versions {
				rec.add(v, at(float64(i)), false)
			}
			if got := len(rep.failed()) > 0; got != tc.violated {
				t.Errorf("violated = %v, want %v:\n%s", got, tc.violated, rep.details(invAttempt, 5))
			}
		})
	}
}

func TestEarlyWriteInvariant(t *testing.T) {
	write := func(seconds float64) proxy.RequestRecord {
		return proxy.RequestRecord{Time: at(seconds), Verb: "patch", Group: "core.gardener.cloud", Resource: "shoots",
			Namespace: gardenNamespace, Name: "chaos-00", Code: 200}
	}
	// deletingIn returns the version the watch delivers once the Runtime is being deleted, with
	// the step and retry record of a step it is in.
	deletingIn := func(step string) *infrav1.Runtime {
		rt := runtimeAt("2", infrav1.StateFailed, step, 0, 2, 10)
		rt.DeletionTimestamp = ptrTime(at(1.5))
		return rt
	}
	tests := []struct {
		name     string
		write    proxy.RequestRecord
		deleteAt float64 // 0: no deletion
		later    *infrav1.Runtime
		violated bool
	}{
		{name: "a write before the stored next retry", write: write(5), violated: true},
		{name: "a write after it", write: write(10.5)},
		{name: "a write before the version was seen", write: write(0.5)},
		{name: "a write after the deletion was asked for", write: write(5), deleteAt: 4},
		{
			name:  "a write after the watch showed the deletion, which the manager had not yet taken in",
			write: write(5), deleteAt: 1.5, later: deletingIn("WaitForShoot"),
		},
		{
			name:  "a write before the next retry of a deletion step",
			write: write(5), deleteAt: 1.5, later: deletingIn(runtimectrl.StepDeleteShoot), violated: true,
		},
		{name: "a read", write: proxy.RequestRecord{Time: at(5), Verb: "get", Resource: "shoots", Namespace: gardenNamespace, Name: "chaos-00"}},
		{
			name:     "a write of the structured-auth ConfigMap",
			write:    proxy.RequestRecord{Time: at(5), Verb: "patch", Resource: "configmaps", Namespace: gardenNamespace, Name: "structured-auth-config-chaos-00"},
			violated: true,
		},
		{name: "another shoot", write: proxy.RequestRecord{Time: at(5), Verb: "patch", Resource: "shoots", Namespace: gardenNamespace, Name: "chaos-01"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, rep := newTestRecorder()
			rec.add(runtimeAt("1", infrav1.StatePending, "ApplyShoot", 0, 2, 10), at(1), false)
			if tc.deleteAt > 0 {
				rec.markDeleting("chaos-00", at(tc.deleteAt))
			}
			if tc.later != nil {
				rec.add(tc.later, at(2), false)
			}
			checkEarlyWrites(rec, rep, []proxy.RequestRecord{tc.write})
			if got := len(rep.failed()) > 0; got != tc.violated {
				t.Errorf("violated = %v, want %v:\n%s", got, tc.violated, rep.details(invEarlyWrite, 5))
			}
		})
	}
}

func TestDeadlineInvariant(t *testing.T) {
	waiting := func(state infrav1.State) *infrav1.Runtime {
		rt := runtimeAt("1", state, "WaitForShoot", 0, 0, 0)
		rt.Status.Step.Deadline = ptrTime(at(60))
		return rt
	}
	tests := []struct {
		name      string
		rt        *infrav1.Runtime
		now       float64
		connected bool
		violated  bool
	}{
		{name: "past the deadline and the grace", rt: waiting(infrav1.StatePending), now: 91, connected: true, violated: true},
		{name: "within the grace", rt: waiting(infrav1.StatePending), now: 89, connected: true},
		{name: "Failed", rt: waiting(infrav1.StateFailed), now: 200, connected: true},
		{name: "while the watch is down", rt: waiting(infrav1.StatePending), now: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, rep := newTestRecorder()
			rec.add(tc.rt, at(1), false)
			rec.setConnected(tc.connected)
			rec.checkDeadlines(at(tc.now))
			rec.checkDeadlines(at(tc.now + 1))
			v := rep.violations[invDeadline]
			if got := len(v) > 0; got != tc.violated {
				t.Errorf("violated = %v, want %v: %+v", got, tc.violated, v)
			}
			if len(v) > 1 {
				t.Errorf("one overrun reported %d times", len(v))
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	body := `# HELP leader_election_master_status Gauge of if the reporting system is master of the relevant lease.
# TYPE leader_election_master_status gauge
leader_election_master_status{name="infrastructure-manager.kyma-project.io"} 1
infrastructure_manager_runtime_failed{class="Timeout",reason="StepDeadlineExceeded",runtime_id="chaos-03",runtime_name="chaos-03",shoot="stuck-03",step="WaitForShoot"} 1
process_start_time_seconds 1.7e+09
odd{msg="a \"quoted\" value, with a comma"} 2 1700000000
`
	m, err := parseMetrics([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if s := m["leader_election_master_status"]; len(s) != 1 || s[0].value != 1 || s[0].labels["name"] != leaseName {
		t.Errorf("leader_election_master_status = %+v", s)
	}
	if s := m["infrastructure_manager_runtime_failed"]; len(s) != 1 || s[0].labels["runtime_name"] != "chaos-03" || s[0].labels["step"] != "WaitForShoot" {
		t.Errorf("infrastructure_manager_runtime_failed = %+v", s)
	}
	if s := m["process_start_time_seconds"]; len(s) != 1 || s[0].value != 1.7e9 {
		t.Errorf("process_start_time_seconds = %+v", s)
	}
	if s := m["odd"]; len(s) != 1 || s[0].labels["msg"] != `a "quoted" value, with a comma` || s[0].value != 2 {
		t.Errorf("odd = %+v", s)
	}
	if _, err := parseMetrics([]byte(`broken{a="b} 1`)); err == nil {
		t.Error("an unterminated label parsed")
	}
}

// TestChaosScenarioShares checks that the fault rules, tried in order, hit each share of the
// calls the profile asks for.
func TestChaosScenarioShares(t *testing.T) {
	p := shortProfile()
	sc := chaosScenario(p)
	want := map[string]float64{
		"transient-5xx": 0.6 * p.Transient, "transient-drop": 0.2 * p.Transient,
		"transient-lost-reply": 0.2 * p.Transient, "malformed": p.Malformed,
	}
	left := 1.0
	total := 0.0
	for _, r := range sc.Faults {
		if r.Probability == nil {
			t.Fatalf("rule %s has no probability", r.Name)
		}
		got := left * *r.Probability
		if math.Abs(got-want[r.Name]) > 1e-9 {
			t.Errorf("rule %s hits %.4f of the calls, want %.4f", r.Name, got, want[r.Name])
		}
		left -= got
		total += got
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
	}
	if math.Abs(total-(p.Transient+p.Malformed)) > 1e-9 {
		t.Errorf("faults hit %.4f of the calls, want %.4f", total, p.Transient+p.Malformed)
	}
	if len(sc.Lifecycle) != 1 || !strings.HasPrefix(sc.Lifecycle[0].Shoot, stuckPrefix) {
		t.Errorf("lifecycle rules = %+v, want the hang of the stuck shoots", sc.Lifecycle)
	}
}

func TestStepOnceInvariant(t *testing.T) {
	tests := []struct {
		name     string
		steps    []string // the step of each version, entered at its index
		violated bool
	}{
		{name: "the machine's path", steps: []string{"Initialise", "WaitForShoot", "WaitForKubeconfig", "Done"}},
		{name: "a step run again from a stale copy", steps: []string{"Initialise", "WaitForShoot", "ApplyShoot"}, violated: true},
		{name: "a re-check from the start", steps: []string{"Initialise", "WaitForShoot", "Done", "Initialise", "WaitForShoot", "Done"}},
		{name: "the deletion", steps: []string{"Initialise", "WaitForShoot", "DeleteGardenerCluster", "WaitForShootDeletion"}},
		{name: "the same step afresh", steps: []string{"Initialise", "WaitForShoot", "WaitForShoot"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, rep := newTestRecorder()
			for i, step := range tc.steps {
				rec.add(runtimeAt(string(rune('a'+i)), infrav1.StatePending, step, float64(i), 0, 0), at(float64(i)+0.5), false)
			}
			if got := len(rep.failed()) > 0; got != tc.violated {
				t.Errorf("violated = %v, want %v:\n%s", got, tc.violated, rep.details(invStepOnce, 5))
			}
		})
	}
}

func TestStepsBetween(t *testing.T) {
	in := func(step string) observation {
		return observation{step: &infrav1.StepStatus{Name: step}}
	}
	tests := []struct {
		from, to string
		want     int
	}{
		{runtimectrl.StepApplyShoot, runtimectrl.StepWaitForShoot, 1},
		{runtimectrl.StepInitialise, runtimectrl.StepWaitForShoot, 3},
		{runtimectrl.StepConfigureOIDC, "Done", 2},
		// Restarts: into the start step, or into the deletion and on along its path.
		{"Done", runtimectrl.StepInitialise, 1},
		{"Done", runtimectrl.StepWaitForShoot, 4},
		{runtimectrl.StepWaitForShoot, runtimectrl.StepWaitForShootDeletion, 3},
		// The same step afresh.
		{runtimectrl.StepWaitForShoot, runtimectrl.StepWaitForShoot, 1},
	}
	for _, tc := range tests {
		if got := stepsBetween(in(tc.from), in(tc.to)); got != tc.want {
			t.Errorf("%s → %s: %d step changes, want %d", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestClassifyWrites(t *testing.T) {
	setReady := func(rt *infrav1.Runtime, reason, msg string) {
		rt.Status.Conditions = []metav1.Condition{{Type: infrav1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}
	}
	first := runtimeAt("1", infrav1.StatePending, "WaitForShoot", 0, 0, 0)
	setReady(first, "Waiting", "shoot is not visible yet")
	base := observe(first, at(1), false)
	change := func(f func(*infrav1.Runtime)) observation {
		rt := runtimeAt("2", infrav1.StatePending, "WaitForShoot", 0, 0, 0)
		setReady(rt, "Waiting", "shoot is not visible yet")
		f(rt)
		return observe(rt, at(2), false)
	}
	tests := []struct {
		name string
		o    observation
		want writeKind
	}{
		{"another step", change(func(rt *infrav1.Runtime) { rt.Status.Step.Name = "EnsureGardenerCluster" }), writeStep},
		{"a finalizer", change(func(rt *infrav1.Runtime) { rt.Finalizers = []string{"x"} }), writeInput},
		{"a retry record", change(func(rt *infrav1.Runtime) { rt.Status.Retry = &infrav1.RetryStatus{Step: "WaitForShoot", Attempt: 1} }), writeRetry},
		{"the shoot's progress", change(func(rt *infrav1.Runtime) {
			rt.Status.Gardener = &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Progress: 50}}
		}), writeWorld},
		{"only the Ready message", change(func(rt *infrav1.Runtime) { rt.Status.State = infrav1.StatePending }), writeOther},
		{"what a waiting step waits for", change(func(rt *infrav1.Runtime) { setReady(rt, "Waiting", "Gardener operation Create is Pending") }), writeWorld},
	}
	for _, tc := range tests {
		if got := classify(base, tc.o); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
