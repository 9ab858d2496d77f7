// Package crd embeds the CustomResourceDefinitions the Gardener simulator
// installs into its garden API server, so that the simulator starts from any
// working directory, and reads them (Read) for this package's and for
// subpackage shoot's manifests.
package crd
