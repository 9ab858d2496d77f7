package localenv

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// maxMessage is the longest message a progress line shows, in runes.
const maxMessage = 110

// shootReserve is the room kept for the shoot's operation ("; shoot Reconcile Processing 100%").
const shootReserve = 34

// Column widths of the progress display; longer values push the next column right.
const (
	nameWidth    = 20
	stateWidth   = 11
	stepWidth    = 22
	attemptWidth = 8
	retryWidth   = 11
)

// Header is the first line of the progress display, aligned with the lines of Row.Format
// (which the Printer prefixes with an 8-character time).
func Header() string {
	return fmt.Sprintf("%-8s %-*s %-*s %-*s %-*s %-*s %s", "TIME",
		nameWidth, "NAME", stateWidth, "STATE", stepWidth, "STEP",
		attemptWidth, "ATTEMPT", retryWidth, "NEXT-RETRY", "REASON/MESSAGE")
}

// Row is what the progress display shows of one Runtime: exactly the fields whose change is
// worth a line.
type Row struct {
	// Name of the Runtime.
	Name string
	// State is the coarse state, "-" before the manager has set one.
	State string
	// Step is the FSM step, "-" before the first.
	Step string
	// Attempt and Limit come from the retry record; both are 0 while the step does not fail.
	Attempt, Limit int32
	// NextRetry is when the failing step runs again; zero if it is not scheduled.
	NextRetry time.Time
	// Message is the reason and message of the retry record or, without one, of the Ready
	// condition, with the shoot's operation while it is not Succeeded; whitespace collapsed and
	// cut to what a line shows.
	Message string
}

// RowOf derives the row of a Runtime from its status alone.
func RowOf(rt *infrav1.Runtime) Row {
	r := engineRow(rt.Name, rt.Status.EngineStatus)
	r.Message = message(rt)
	if rt.DeletionTimestamp != nil && rt.Status.State != infrav1.StateTerminating {
		r.State = "Deleting"
	}
	return r
}

// engineRow fills the columns every object on the FSM engine has: state, step and retry.
func engineRow(name string, st infrav1.EngineStatus) Row {
	r := Row{Name: name, State: orDash(string(st.State)), Step: "-"}
	if s := st.Step; s != nil {
		r.Step = orDash(s.Name)
	}
	if rr := st.Retry; rr != nil {
		r.Attempt, r.Limit = rr.Attempt, rr.Limit
		if rr.NextRetryAt != nil {
			r.NextRetry = rr.NextRetryAt.Time
		}
	}
	return r
}

// message is the REASON/MESSAGE column: what fails, or what the object waits for.
func message(rt *infrav1.Runtime) string {
	var main, shoot string
	if rr := rt.Status.Retry; rr != nil {
		main = retryMessage(rr)
	} else if c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady); c != nil {
		main = joinNonEmpty(": ", c.Reason, c.Message)
	}
	if g := rt.Status.Gardener; g != nil && g.LastOperation != nil && g.LastOperation.State != "Succeeded" {
		op := g.LastOperation
		// Waiting messages often quote the operation already.
		if !strings.Contains(main, op.Type+" "+op.State) {
			shoot = fmt.Sprintf("shoot %s %s %d%%", op.Type, op.State, op.Progress)
		}
	}
	if main == "" && shoot == "" && rt.Status.State == "" {
		return "Created; the manager has not picked it up yet"
	}
	// The message is cut here, not when printed, so that a change the line would not show
	// prints no line; the shoot's operation, short and changing, always stays visible, and the
	// message is cut at the same place whatever the operation's length.
	if shoot != "" {
		return joinNonEmpty("; ", shorten(main, maxMessage-shootReserve), shoot)
	}
	return shorten(main, maxMessage)
}

// retryMessage is the REASON/MESSAGE column of a failing step.
func retryMessage(rr *infrav1.RetryStatus) string {
	// Messages often begin with the reason; the line shows it once.
	return joinNonEmpty(": ", rr.Class+"/"+rr.Reason, strings.TrimPrefix(rr.Message, rr.Reason+": "))
}

// KubeconfigPrefix starts the NAME column of a GardenerCluster's row, so that the kubeconfig work
// of a runtime stands apart from the runtime's own row.
const KubeconfigPrefix = "kubeconfig/"

// KubeconfigRowOf derives the row of a GardenerCluster, the manager's work on a runtime's admin
// kubeconfig, from its status alone.
func KubeconfigRowOf(gc *infrav1.GardenerCluster) Row {
	r := engineRow(KubeconfigPrefix+gc.Name, gc.Status.EngineStatus)
	if rr := gc.Status.Retry; rr != nil {
		r.Message = shorten(retryMessage(rr), maxMessage)
	} else if c := meta.FindStatusCondition(gc.Status.Conditions, infrav1.ConditionReady); c != nil {
		r.Message = shorten(joinNonEmpty(": ", c.Reason, c.Message), maxMessage)
	}
	return r
}

// Equal reports whether two rows show the same thing.
func (r Row) Equal(o Row) bool {
	return r.Name == o.Name && r.State == o.State && r.Step == o.Step && r.Attempt == o.Attempt &&
		r.Limit == o.Limit && r.NextRetry.Equal(o.NextRetry) && r.Message == o.Message
}

// Format renders the row in the columns of Header, without the time; now turns NextRetry into
// a delay.
func (r Row) Format(now time.Time) string {
	attempt := "-"
	if r.Attempt > 0 || r.Limit > 0 {
		attempt = fmt.Sprintf("%d/%d", r.Attempt, r.Limit)
	}
	return fmt.Sprintf("%-*s %-*s %-*s %-*s %-*s %s",
		nameWidth, r.Name, stateWidth, r.State, stepWidth, r.Step,
		attemptWidth, attempt, retryWidth, nextRetry(r.NextRetry, now), shorten(r.Message, maxMessage))
}

// nextRetry renders when a retry is due, relative to now.
func nextRetry(at, now time.Time) string {
	if at.IsZero() {
		return "-"
	}
	d := at.Sub(now)
	switch {
	case d <= 0:
		return "now"
	case d < 10*time.Second:
		return "in " + d.Round(100*time.Millisecond).String()
	default:
		return "in " + d.Round(time.Second).String()
	}
}

// Tracker turns a stream of observed Runtimes into progress lines: one per change of a row, and
// a summary each time all runtimes have become Ready. It measures each runtime's time from being
// applied (Applied) to its first Ready. It is safe for concurrent use.
type Tracker struct {
	mu       sync.Mutex
	rows     map[string]Row
	failing  map[string]Row // GardenerClusters shown because their step fails
	applied  map[string]time.Time
	ready    map[string]time.Duration
	allReady bool
}

// NewTracker returns a tracker that has seen nothing.
func NewTracker() *Tracker {
	return &Tracker{rows: map[string]Row{}, failing: map[string]Row{}, applied: map[string]time.Time{}, ready: map[string]time.Duration{}}
}

// Applied records when the Runtime namespace/name was applied. Call it before creating the
// object, so the first observation already knows it.
func (t *Tracker) Applied(namespace, name string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applied[namespace+"/"+name] = at
}

// Observe returns the lines to print for rt as seen at now: none when nothing shown has changed.
func (t *Tracker) Observe(rt *infrav1.Runtime, now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := rt.Namespace + "/" + rt.Name
	row := RowOf(rt)
	if last, ok := t.rows[key]; ok && last.Equal(row) {
		return nil
	}
	t.rows[key] = row
	shown := row
	if row.State == string(infrav1.StateReady) {
		if _, seen := t.ready[key]; !seen {
			if at, ok := t.applied[key]; ok {
				d := now.Sub(at)
				t.ready[key] = d
				shown.Message = joinNonEmpty("; ", "Ready "+round(d).String()+" after apply", row.Message)
			}
		}
	}
	return append([]string{shown.Format(now)}, t.summary()...)
}

// ObserveKubeconfig returns the lines to print for a GardenerCluster as seen at now. Its work is
// routine and shown only while its step fails, one line per change, and once more when the
// failure is over; so a retried kubeconfig request is as visible as a retried runtime step. The
// rows do not count towards "all runtimes are Ready".
func (t *Tracker) ObserveKubeconfig(gc *infrav1.GardenerCluster, now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := gc.Namespace + "/" + gc.Name
	row := KubeconfigRowOf(gc)
	last, shown := t.failing[key]
	switch {
	case gc.Status.Retry != nil && shown && last.Equal(row):
		return nil
	case gc.Status.Retry != nil:
		t.failing[key] = row
		return []string{row.Format(now)}
	case shown:
		// The retry record is gone: the step succeeded at last, or ran out of attempts.
		delete(t.failing, key)
		return []string{row.Format(now)}
	default:
		return nil
	}
}

// Forget drops a deleted Runtime and returns its last line.
func (t *Tracker) Forget(namespace, name string, now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := namespace + "/" + name
	row, ok := t.rows[key]
	if !ok {
		row = Row{Name: name, Step: "-"}
	}
	delete(t.rows, key)
	delete(t.ready, key)
	delete(t.applied, key)
	row.State, row.Attempt, row.Limit, row.NextRetry, row.Message = "Deleted", 0, 0, time.Time{}, "The Runtime is gone"
	return append([]string{row.Format(now)}, t.summary()...)
}

// summary returns a line when all runtimes have just become Ready, and re-arms once one is not.
func (t *Tracker) summary() []string {
	all := len(t.rows) > 0
	for _, r := range t.rows {
		if r.State != string(infrav1.StateReady) {
			all = false
			break
		}
	}
	if !all || t.allReady {
		t.allReady = all
		return nil
	}
	t.allReady = true
	keys := make([]string, 0, len(t.rows))
	for k := range t.rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var times []string
	for _, k := range keys {
		if d, ok := t.ready[k]; ok {
			times = append(times, fmt.Sprintf("%s %s", t.rows[k].Name, round(d)))
		}
	}
	line := fmt.Sprintf("== All %d runtimes are Ready", len(t.rows))
	if len(times) > 0 {
		line += " (apply to Ready: " + strings.Join(times, ", ") + ")"
	}
	return []string{line + ". Ctrl-C stops everything."}
}

// round shortens a duration for display.
func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// shorten collapses whitespace and cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func joinNonEmpty(sep string, parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
