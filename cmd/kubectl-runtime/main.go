// Command kubectl-runtime is the operator's kubectl plugin for Kyma Runtimes. Installed on the
// PATH as kubectl-runtime (make install-plugin puts it into bin/), it runs as
// `kubectl runtime COMMAND`. It reads the caller's kubeconfig and takes kubectl's -n, --context
// and --kubeconfig flags.
//
// Commands:
//
//	list [--failing|--retrying] [-o wide|yaml|json]
//	    One line a Runtime: state, step, attempt of limit, next retry, last reason, age.
//	status NAME [--prometheus URL] [-o yaml|json]
//	    The retry record, the step history from the Runtime's events, Gardener's last operation
//	    and errors, the kubeconfig's expiry, and the alerts firing for it.
//	explain NAME
//	    In plain words: what the Runtime waits for, what happens next and when, and what a
//	    person can do.
//	retry NAME [--timeout 1m] [--wait=false]
//	    Ask for a manual retry (a fresh retry budget, at once) and wait until the manager has
//	    taken the request in.
//	render -f RUNTIME.yaml [--shoot SHOOT.yaml] [--config FILE]
//	    Print, as YAML, exactly the objects the manager would write to the garden for the
//	    Runtime: the structured authentication ConfigMap and the Shoot. No cluster is needed.
//	plan [-n NS] [RUNTIME...] --gardener-kubeconfig FILE | plan -f RUNTIME.yaml [--shoot SHOOT.yaml]
//	    What the manager would write to each Runtime's shoot now, per field, and a summary
//	    (runtimes unchanged, with changes, changes by field). Writes nothing.
//	handback (--all | NAME...) [--dry-run]
//	    For a rollback: give Runtimes back to upstream's manager, its finalizer in place of this
//	    manager's. Refuses while this manager leads.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kubectl-runtime:", err)
		}
		os.Exit(1)
	}
}

// run runs one command line with the real clock.
func run(args []string, stdout, stderr io.Writer) error {
	return newRoot(stdout, stderr, time.Now).execute(args)
}

// root is the plugin: the kubectl connection flags every cluster command shares, where it
// writes, and its clock (tests fix it, so relative times in golden outputs stay put).
type root struct {
	flags          *genericclioptions.ConfigFlags
	stdout, stderr io.Writer
	now            func() time.Time
}

func newRoot(stdout, stderr io.Writer, now func() time.Time) *root {
	return &root{flags: genericclioptions.NewConfigFlags(true), stdout: stdout, stderr: stderr, now: now}
}

// execute builds the command tree and runs args through it.
func (r *root) execute(args []string) error {
	cmd := &cobra.Command{
		Use:   "kubectl runtime",
		Short: "Inspect, explain and retry Kyma Runtimes of Infrastructure Manager",
		Long: "Inspect, explain and retry Kyma Runtimes of Infrastructure Manager.\n\n" +
			"Uses your kubeconfig like kubectl: -n picks the namespace of the Runtimes (kcp-system on a landscape).",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(r.stdout)
	cmd.SetErr(r.stderr)
	cmd.SetArgs(args)
	r.flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(r.listCommand(), r.statusCommand(), r.explainCommand(), r.retryCommand(), r.renderCommand(), r.planCommand(), r.handbackCommand())
	cmd.CompletionOptions.DisableDefaultCmd = true
	return cmd.Execute() //nolint:wrapcheck // the command's own errors say what failed; "kubectl-runtime:" prefixes them
}

// renderCommand wraps render, which parses the manager's own flags with the standard library.
func (r *root) renderCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "render -f RUNTIME.yaml [--shoot SHOOT.yaml] [--config FILE] [manager flags]",
		Short:              "Print the objects the manager would write to the garden for a Runtime, offline",
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return render(args, r.stdout, r.stderr)
		},
	}
}
