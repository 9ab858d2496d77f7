package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/scenario"
)

const intro = `Usage: gardensim [flags]

Plays Gardener for Infrastructure Manager: a real garden kube-apiserver serving
core.gardener.cloud/v1beta1 Shoots behind an HTTPS proxy (adminkubeconfig,
deletion confirmation, injected faults), a gardenlet-like controller that runs
shoot operations, and real kube-apiservers as shoot clusters. Runs until
SIGINT or SIGTERM, then stops every process it started.

Flags:
`

const adminHelp = `
Admin API (on --admin-listen), JSON or YAML bodies:
  GET|PUT|DELETE /rules             fault rules of the Gardener API
  GET|PUT|DELETE /lifecycle-rules   lifecycle rules of shoot operations
  GET /scenarios, PUT /scenarios/{name}   list or apply a shipped scenario
  e.g. curl -X PUT --data '[{"fault":{"type":"Status","code":503}}]' http://127.0.0.1:8686/rules
`

// usage prints the help: every flag, the scenarios and the admin API.
func usage(fs *flag.FlagSet, out io.Writer) {
	fmt.Fprint(out, intro)
	fs.VisitAll(func(f *flag.Flag) {
		typ, text := flag.UnquoteUsage(f)
		if typ != "" {
			typ = " " + typ
		}
		fmt.Fprintf(out, "  --%s%s\n        %s", f.Name, typ, text)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(out, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(out)
	})
	fmt.Fprintln(out, "\nScenarios (--scenario):")
	scenario.WriteList(out)
	fmt.Fprint(out, adminHelp)
}
