package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// report is everything `status` shows of one Runtime; -o yaml and -o json print it as it is.
type report struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	RuntimeID string `json:"runtimeID,omitempty"`
	Shoot     string `json:"shoot,omitempty"`
	// Phase is what the engine is doing: New, Progressing, Waiting, Retrying, Paused, Failed,
	// Deleting or Ready.
	Phase phase               `json:"phase"`
	State infrav1.State       `json:"state,omitempty"`
	Step  *infrav1.StepStatus `json:"step,omitempty"`
	// Retry is the retry record, while a step fails.
	Retry      *infrav1.RetryStatus `json:"retry,omitempty"`
	Conditions []metav1.Condition   `json:"conditions,omitempty"`
	// Gardener is the shoot's last operation and errors, as the manager last saw them.
	Gardener *infrav1.GardenerStatus `json:"gardener,omitempty"`
	// Kubeconfig is the admin kubeconfig the GardenerCluster keeps; absent before it exists.
	Kubeconfig *kubeconfigReport `json:"kubeconfig,omitempty"`
	// Events are the manager's events for the Runtime, oldest first: its step history.
	Events []eventReport `json:"events,omitempty"`
	// Alerts are the alerts Prometheus has for the Runtime, and the platform alerts that mute
	// them; present only with --prometheus.
	Alerts *[]alertReport `json:"alerts,omitempty"`
}

type kubeconfigReport struct {
	Secret    string        `json:"secret"`
	State     infrav1.State `json:"state,omitempty"`
	ExpiresAt *metav1.Time  `json:"expiresAt,omitempty"`
	RotatedAt *metav1.Time  `json:"rotatedAt,omitempty"`
}

type eventReport struct {
	Time    metav1.Time `json:"time"`
	Type    string      `json:"type"`
	Reason  string      `json:"reason"`
	Count   int32       `json:"count"`
	Message string      `json:"message"`
}

type statusOptions struct {
	prometheus string
	output     string
}

func (r *root) statusCommand() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status NAME [--prometheus URL] [-o yaml|json]",
		Short: "Show a Runtime's retry record, step history, Gardener's last operation, kubeconfig expiry and alerts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output, "", "yaml", "json"); err != nil {
				return err
			}
			rep, err := r.report(cmd.Context(), args[0], o.prometheus)
			if err != nil {
				return err
			}
			return r.printReport(rep, o.output)
		},
	}
	cmd.Flags().StringVar(&o.prometheus, "prometheus", "", "Prometheus base URL; shows the alerts firing for the Runtime")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: yaml or json")
	return cmd
}

// report reads the Runtime, its GardenerCluster, its events and, with a Prometheus URL, its
// alerts.
func (r *root) report(ctx context.Context, name, prometheus string) (*report, error) {
	c, err := r.connect()
	if err != nil {
		return nil, err
	}
	rt, err := c.runtime(ctx, name)
	if err != nil {
		return nil, err
	}
	gc, err := c.gardenerCluster(ctx, rt)
	if err != nil {
		return nil, err
	}
	events, err := c.events(ctx, rt)
	if err != nil {
		return nil, err
	}
	rep := newReport(rt, gc, events)
	if prometheus != "" {
		alerts, err := runtimeAlerts(ctx, prometheus, rt)
		if err != nil {
			return nil, err
		}
		rep.Alerts = &alerts
	}
	return rep, nil
}

// newReport assembles the report from what was read.
func newReport(rt *infrav1.Runtime, gc *infrav1.GardenerCluster, events []eventsv1.Event) *report {
	st := rt.Status.EngineStatus
	rep := &report{
		Name: rt.Name, Namespace: rt.Namespace, RuntimeID: rt.Labels[infrav1.LabelRuntimeID], Shoot: rt.Spec.Shoot.Name,
		Phase: phaseOf(rt), State: st.State, Step: st.Step, Retry: st.Retry, Conditions: st.Conditions,
		Gardener: gardenerStatus(rt),
	}
	if gc != nil {
		rep.Kubeconfig = &kubeconfigReport{
			Secret: gc.Spec.Kubeconfig.Secret.Namespace + "/" + gc.Spec.Kubeconfig.Secret.Name, State: gc.Status.State,
			ExpiresAt: gc.Status.KubeconfigExpiresAt, RotatedAt: gc.Status.KubeconfigRotatedAt,
		}
	}
	for _, e := range events {
		rep.Events = append(rep.Events, eventReport{
			Time: metav1.NewTime(eventTime(e)), Type: e.Type, Reason: e.Reason, Count: eventCount(e), Message: e.Note,
		})
	}
	return rep
}

// gardenerStatus is the shoot's last operation and errors: the manager's own mirror, or the
// fields under upstream's names for a Runtime upstream wrote last.
func gardenerStatus(rt *infrav1.Runtime) *infrav1.GardenerStatus {
	if g := rt.Status.Gardener; g != nil {
		return g
	}
	if rt.Status.ShootLastOperation == nil && len(rt.Status.ShootLastErrors) == 0 {
		return nil
	}
	g := &infrav1.GardenerStatus{}
	if op := rt.Status.ShootLastOperation; op != nil {
		g.LastOperation = &infrav1.LastOperation{
			Type: string(op.Type), State: string(op.State), Progress: op.Progress,
			Description: op.Description, LastUpdateTime: op.LastUpdateTime,
		}
	}
	for _, e := range rt.Status.ShootLastErrors {
		codes := make([]string, 0, len(e.Codes))
		for _, c := range e.Codes {
			codes = append(codes, string(c))
		}
		g.LastErrors = append(g.LastErrors, infrav1.LastError{Codes: codes, Description: e.Description})
	}
	return g
}

func (r *root) printReport(rep *report, format string) error {
	var data []byte
	var err error
	switch format {
	case "yaml":
		data, err = yaml.Marshal(rep)
	case "json":
		data, err = json.MarshalIndent(rep, "", "    ")
		data = append(data, '\n')
	default:
		return r.describe(rep)
	}
	if err != nil {
		return fmt.Errorf("print: %w", err)
	}
	if _, err := r.stdout.Write(data); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// describe prints the report for a person, kubectl describe style: one block of fields, then
// the tables, each aligned on its own.
func (r *root) describe(rep *report) error {
	now := r.now()
	var block bytes.Buffer
	fields := printers.GetNewTabWriter(&block)
	field := func(indent int, name, format string, args ...any) {
		fmt.Fprintf(fields, "%s%s:\t%s\n", strings.Repeat("  ", indent), name, fmt.Sprintf(format, args...))
	}
	field(0, "Runtime", "%s/%s", rep.Namespace, rep.Name)
	field(0, "Runtime ID", "%s", orDash(rep.RuntimeID))
	field(0, "Shoot", "%s", orDash(rep.Shoot))
	if string(rep.State) == string(rep.Phase) {
		field(0, "State", "%s", rep.State)
	} else {
		field(0, "State", "%s (%s)", orDash(string(rep.State)), rep.Phase)
	}
	if s := rep.Step; s != nil {
		field(0, "Step", "%s, entered %s", describeStep(s.Name), since(now, s.EnteredAt))
		switch {
		case s.Deadline == nil:
		case s.Deadline.After(now):
			field(1, "Deadline", "%s (%s)", until(now, s.Deadline), stamp(s.Deadline))
		default:
			field(1, "Deadline", "passed %s (%s)", since(now, *s.Deadline), stamp(s.Deadline))
		}
	}
	describeRetry(field, now, rep.Retry)
	describeGardener(field, now, rep.Gardener)
	describeKubeconfig(field, now, rep.Kubeconfig)
	if err := fields.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	// A heading's empty value leaves the padding of its column behind.
	for line := range strings.Lines(block.String()) {
		fmt.Fprintln(r.stdout, strings.TrimRight(line, " \n"))
	}
	tables := []func(io.Writer){
		func(w io.Writer) { describeConditions(w, now, rep.Conditions) },
		func(w io.Writer) { describeEvents(w, now, rep.Events) },
	}
	if rep.Alerts != nil {
		tables = append(tables, func(w io.Writer) { describeAlerts(w, now, *rep.Alerts) })
	}
	for _, table := range tables {
		w := printers.GetNewTabWriter(r.stdout)
		table(w)
		if err := w.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

type fieldFunc func(indent int, name, format string, args ...any)

// table prints a titled table, indented under its title, or the title and none when it has no
// rows.
func table(w io.Writer, title, none string, header []string, rows [][]string) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "%s:\t%s\n", title, none)
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintf(w, "  %s\n", strings.Join(row, "\t"))
	}
}

func describeConditions(w io.Writer, now time.Time, conditions []metav1.Condition) {
	rows := make([][]string, 0, len(conditions))
	for _, c := range conditions {
		rows = append(rows, []string{c.Type, string(c.Status), c.Reason, since(now, c.LastTransitionTime), oneLine(c.Message, 120)})
	}
	table(w, "Conditions", "none", []string{"TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"}, rows)
}

func describeEvents(w io.Writer, now time.Time, events []eventReport) {
	rows := make([][]string, 0, len(events))
	for _, e := range events {
		rows = append(rows, []string{since(now, e.Time), e.Type, e.Reason, fmt.Sprint(e.Count), oneLine(e.Message, 120)})
	}
	title := "Events (the step history, oldest first)"
	if len(rows) == 0 {
		title = "Events"
	}
	table(w, title, "none (Events expire an hour after they were last seen)",
		[]string{"LAST SEEN", "TYPE", "REASON", "COUNT", "MESSAGE"}, rows)
}

func describeRetry(field fieldFunc, now time.Time, rec *infrav1.RetryStatus) {
	if rec == nil {
		field(0, "Retry", "none (no step is failing)")
		return
	}
	field(0, "Retry", "")
	field(1, "Step", "%s", rec.Step)
	field(1, "Attempt", "%d of %d", rec.Attempt, rec.Limit)
	field(1, "Class", "%s", rec.Class)
	field(1, "Reason", "%s", rec.Reason)
	field(1, "Message", "%s", oneLine(rec.Message, 160))
	field(1, "First failure", "%s", since(now, rec.FirstFailure))
	field(1, "Last failure", "%s", since(now, rec.LastFailure))
	switch {
	case rec.PausedAt != nil:
		field(1, "Paused", "since %s, until Gardener is back (no attempt is spent)", since(now, *rec.PausedAt))
	case rec.NextRetryAt != nil:
		field(1, "Next retry", "%s (%s)", until(now, rec.NextRetryAt), stamp(rec.NextRetryAt))
	}
}

func describeGardener(field fieldFunc, now time.Time, g *infrav1.GardenerStatus) {
	if g == nil || (g.LastOperation == nil && len(g.LastErrors) == 0) {
		field(0, "Gardener", "no operation reported yet")
		return
	}
	field(0, "Gardener", "")
	if op := g.LastOperation; op != nil {
		field(1, "Last operation", "%s %s, %d%%, updated %s", op.Type, op.State, op.Progress, since(now, op.LastUpdateTime))
		if op.Description != "" {
			field(1, "Description", "%s", oneLine(op.Description, 160))
		}
	}
	for _, e := range g.LastErrors {
		field(1, "Last error", "%s: %s", strings.Join(e.Codes, ", "), oneLine(e.Description, 160))
	}
}

func describeKubeconfig(field fieldFunc, now time.Time, k *kubeconfigReport) {
	if k == nil {
		field(0, "Kubeconfig", "no GardenerCluster yet")
		return
	}
	switch {
	case k.ExpiresAt == nil:
		field(0, "Kubeconfig", "%s, not issued yet", k.Secret)
	case k.ExpiresAt.After(now):
		field(0, "Kubeconfig", "%s, expires %s (%s), rotated %s", k.Secret, until(now, k.ExpiresAt), stamp(k.ExpiresAt), sinceOrNever(now, k.RotatedAt))
	default:
		field(0, "Kubeconfig", "%s, EXPIRED %s, rotated %s", k.Secret, since(now, *k.ExpiresAt), sinceOrNever(now, k.RotatedAt))
	}
}

func sinceOrNever(now time.Time, t *metav1.Time) string {
	if t == nil {
		return "never"
	}
	return since(now, *t)
}

// stamp prints a time in UTC, to the second.
func stamp(t *metav1.Time) string { return t.UTC().Format(time.RFC3339) }
