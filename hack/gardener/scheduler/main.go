// Command gardener-scheduler is Gardener's scheduler, which binds every new
// shoot to a seed through the shoots/binding subresource, built from the Go
// module proxy at the version pinned in go.mod. The Gardener simulator runs it
// against its garden.
package main

import (
	"fmt"
	"os"

	"github.com/gardener/gardener/cmd/gardener-scheduler/app"
	"github.com/gardener/gardener/cmd/utils"
	"github.com/gardener/gardener/pkg/scheduler/features"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
)

func main() {
	utils.DeduplicateWarnings()
	features.RegisterFeatureGates()
	if err := app.NewCommand().ExecuteContext(signals.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
