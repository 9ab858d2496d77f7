// Package crd embeds the CustomResourceDefinitions the Gardener simulator
// installs into its garden API server, so that the simulator starts from any
// working directory.
package crd
