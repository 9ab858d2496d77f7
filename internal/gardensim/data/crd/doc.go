// Package crd reads CustomResourceDefinition manifests (Read) from an embedded file system:
// those of subpackage shoot, which the simulator installs into its shoot clusters. The
// garden's Gardener API is no CRD: gardener-apiserver serves it (package garden).
package crd
