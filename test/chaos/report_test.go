package chaos_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// invariant names one property the suite checks; the constants are in table order.
type invariant int

const (
	invSettled invariant = iota
	invDeadline
	invOneShoot
	invAttempt
	invStepOnce
	invEarlyWrite
	invOwnWrites
	invCleanup
	invChaos
	invariantCount
)

// title is the invariant as the table states it.
func (i invariant) title() string {
	return [...]string{
		"every Runtime Ready, or Failed with a reason and an alerting series",
		"none waiting past its step deadline (+grace) without being Failed",
		"exactly one Shoot per Runtime (and none created twice)",
		"retry attempt never goes down without a step change or success",
		"no step entered twice within one run of the machine",
		"no Gardener write before the persisted status.retry.nextRetryAt",
		"without faults or kills: each status write changes the step or records news; each shoot and ConfigMap written once",
		"nothing left after deleting every Runtime",
		"chaos carried out (kills, leader found, kube-apiserver back)",
	}[i]
}

// unit says what the checked count of an invariant counts.
func (i invariant) unit() string {
	return [...]string{"runtimes", "sweeps", "runtimes", "versions", "step changes", "writes", "writes", "objects", "actions"}[i]
}

// violation is one breach: which Runtime, when, what.
type violation struct {
	runtime string
	at      time.Time
	msg     string
}

// report collects what was checked and what failed, and the run's figures.
type report struct {
	mu         sync.Mutex
	checked    [invariantCount]int
	violations [invariantCount][]violation
	figures    [][2]string
}

func newReport() *report { return &report{} }

// count records one more check of an invariant.
func (r *report) count(i invariant) { r.countN(i, 1) }

// countN records n more checks of an invariant.
func (r *report) countN(i invariant, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked[i] += n
}

// violate records a breach of an invariant.
func (r *report) violate(i invariant, runtime string, at time.Time, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations[i] = append(r.violations[i], violation{runtime: runtime, at: at, msg: msg})
}

// figure records a figure of the run for the table.
func (r *report) figure(name, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.figures = append(r.figures, [2]string{name, fmt.Sprintf(format, args...)})
}

// failed lists the invariants with violations.
func (r *report) failed() []invariant {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []invariant
	for i := range invariantCount {
		if len(r.violations[i]) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// details returns the violations of an invariant, in time order, at most limit of them.
func (r *report) details(i invariant, limit int) string {
	r.mu.Lock()
	vs := slices.Clone(r.violations[i])
	r.mu.Unlock()
	slices.SortStableFunc(vs, func(a, b violation) int { return a.at.Compare(b.at) })
	var b strings.Builder
	for n, v := range vs {
		if n == limit {
			fmt.Fprintf(&b, "  ... and %d more\n", len(vs)-limit)
			break
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", clock(v.at), v.runtime, v.msg)
	}
	return b.String()
}

// table renders the invariants and the figures.
func (r *report) table(header string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "\n=== chaos: %s\n\n", header)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INVARIANT\tRESULT\tCHECKED\tVIOLATIONS\t")
	for i := range invariantCount {
		result := "PASS"
		switch {
		case len(r.violations[i]) > 0:
			result = "FAIL"
		case r.checked[i] == 0:
			result = "n/a"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d %s\t%d\t\n", i.title(), result, r.checked[i], i.unit(), len(r.violations[i]))
	}
	_ = tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tVALUE")
	for _, f := range r.figures {
		fmt.Fprintf(tw, "%s\t%s\n", f[0], f[1])
	}
	_ = tw.Flush()
	return b.String()
}
