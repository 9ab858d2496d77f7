// Package manager wires Infrastructure Manager's process: the controller-runtime manager, the
// connection to Gardener (package gardenclient), and the Runtime and GardenerCluster
// controllers on the FSM engine. cmd/manager, the local environment and the end-to-end tests
// all start the manager through it, so they run the same wiring.
package manager
