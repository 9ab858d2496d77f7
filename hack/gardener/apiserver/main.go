// Command gardener-apiserver is Gardener's API server (core.gardener.cloud and
// the other Gardener API groups, with Gardener's validation, defaulting and
// admission plugins), built from the Go module proxy at the version pinned in
// go.mod. The Gardener simulator aggregates it onto the garden's kube-apiserver.
package main

import (
	"os"

	"github.com/gardener/gardener/cmd/gardener-apiserver/app"
	"github.com/gardener/gardener/cmd/utils"
	"github.com/gardener/gardener/pkg/apiserver/features"
	_ "k8s.io/component-base/logs/json/register"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
)

func main() {
	utils.DeduplicateWarnings()
	features.RegisterFeatureGates()
	if err := app.NewCommand().ExecuteContext(signals.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
