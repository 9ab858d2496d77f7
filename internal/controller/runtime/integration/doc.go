// Package integration holds the Runtime controller's envtest suites: both controllers, wired by
// manager.New as cmd/manager wires them, against a real kube-apiserver and the Gardener
// simulator, through whole lifecycles, Gardener's errors, the adoption of upstream's Runtimes
// and the landscape's configuration. What a single step does, and every deadline, is tested
// beside the step on in-memory stores and a fake clock (package runtime).
package integration
