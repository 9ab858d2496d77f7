package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// listOptions are the flags of `list`.
type listOptions struct {
	failing, retrying bool
	allNamespaces     bool
	output            string
}

func (r *root) listCommand() *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list [--failing|--retrying] [-o wide|yaml|json]",
		Short: "List Runtimes: state, step, attempt of limit, next retry, last reason, age",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output, "", "wide", "yaml", "json"); err != nil {
				return err
			}
			return r.list(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.failing, "failing", false, "only Failed Runtimes")
	cmd.Flags().BoolVar(&o.retrying, "retrying", false, "only Runtimes whose step failed and is retried (or paused), not yet Failed")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Runtimes of every namespace")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: wide, yaml or json")
	return cmd
}

// checkOutput refuses an -o value the command does not print.
func checkOutput(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return fmt.Errorf("unknown output format %q: use one of %s", got, strings.Join(slices.DeleteFunc(allowed, func(s string) bool { return s == "" }), ", "))
}

func (r *root) list(ctx context.Context, o *listOptions) error {
	c, err := r.connect()
	if err != nil {
		return err
	}
	list := &infrav1.RuntimeList{}
	var opts []client.ListOption
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(c.namespace))
	}
	if err := c.client.List(ctx, list, opts...); err != nil {
		return fmt.Errorf("list runtimes: %w", err)
	}
	list.Items = slices.DeleteFunc(list.Items, func(rt infrav1.Runtime) bool { return !o.selects(&rt) })
	slices.SortFunc(list.Items, func(a, b infrav1.Runtime) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	switch o.output {
	case "yaml", "json":
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = infrav1.GroupVersion.String(), "Runtime"
		}
		return printObject(r.stdout, o.output, list)
	}
	if len(list.Items) == 0 {
		where := fmt.Sprintf("in namespace %q", c.namespace)
		if o.allNamespaces {
			where = "in any namespace"
		}
		fmt.Fprintf(r.stderr, "No Runtimes %s%s.\n", o.which(), where)
		return nil
	}
	return r.printTable(list.Items, o)
}

// selects reports whether the filter flags let rt through; both flags together select either.
func (o *listOptions) selects(rt *infrav1.Runtime) bool {
	if !o.failing && !o.retrying {
		return true
	}
	p := phaseOf(rt)
	return (o.failing && p == phaseFailed) || (o.retrying && (p == phaseRetrying || p == phasePaused))
}

func (o *listOptions) which() string {
	switch {
	case o.failing && o.retrying:
		return "failing or retrying "
	case o.failing:
		return "failing "
	case o.retrying:
		return "retrying "
	}
	return ""
}

func (r *root) printTable(items []infrav1.Runtime, o *listOptions) error {
	now := r.now()
	w := printers.GetNewTabWriter(r.stdout)
	cols := []string{"NAME", "STATE", "STEP", "ATTEMPT", "NEXT RETRY", "REASON", "AGE"}
	if o.allNamespaces {
		cols = append([]string{"NAMESPACE"}, cols...)
	}
	if o.output == "wide" {
		cols = append(cols, "RUNTIME ID", "SHOOT", "CLASS", "MESSAGE")
	}
	fmt.Fprintln(w, strings.Join(cols, "\t"))
	for i := range items {
		rt := &items[i]
		st := rt.Status.EngineStatus
		state, step, attempt, next, reason, class, message := string(st.State), "-", "-", "-", "-", "-", "-"
		if state == "" {
			state = "-"
		}
		if st.Step != nil {
			step = st.Step.Name
		}
		if ready := meta.FindStatusCondition(st.Conditions, infrav1.ConditionReady); ready != nil {
			reason, message = ready.Reason, ready.Message
		}
		if rec := st.Retry; rec != nil {
			attempt = fmt.Sprintf("%d/%d", rec.Attempt, rec.Limit)
			next = until(now, rec.NextRetryAt)
			if rec.PausedAt != nil {
				next = "paused"
			}
			reason, class, message = rec.Reason, rec.Class, rec.Message
		}
		row := []string{rt.Name, state, step, attempt, next, reason, age(now, rt.CreationTimestamp)}
		if o.allNamespaces {
			row = append([]string{rt.Namespace}, row...)
		}
		if o.output == "wide" {
			row = append(row, orDash(rt.Labels[infrav1.LabelRuntimeID]), orDash(rt.Spec.Shoot.Name), class, oneLine(message, 80))
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// printObject prints obj as YAML or JSON, with its kind and apiVersion.
func printObject(out io.Writer, format string, obj runtime.Object) error {
	var p printers.ResourcePrinter = &printers.YAMLPrinter{}
	if format == "json" {
		p = &printers.JSONPrinter{}
	}
	if err := printers.NewTypeSetter(scheme).ToPrinter(p).PrintObj(obj, out); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine shortens a message to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return orDash(s)
}
