// Command kube-apiserver is the Kubernetes API server used by the tests, the
// Gardener simulator and the local environment, built from the Go module proxy
// at the version pinned in go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
