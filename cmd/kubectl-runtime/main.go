// Command kubectl-runtime is the operator's kubectl plugin for Kyma Runtimes. Installed on the
// PATH as kubectl-runtime, it runs as `kubectl runtime COMMAND`.
//
// Commands:
//
//	render -f RUNTIME.yaml [--shoot SHOOT.yaml] [--config FILE]
//	    Print, as YAML, exactly the objects the manager would write to the garden for the
//	    Runtime: the structured authentication ConfigMap and the Shoot. No cluster is needed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kubectl-runtime:", err)
		}
		os.Exit(1)
	}
}

const usage = `Usage: kubectl runtime COMMAND [flags]

Commands:
  render   print the objects the manager would write to the garden for a Runtime, offline

Run 'kubectl runtime COMMAND -h' for the flags of a command.
`

// run dispatches one command line.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "render":
		return render(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}
