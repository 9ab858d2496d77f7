// Package runtime is the Runtime controller: the steps that turn a Runtime into a Gardener shoot
// and a usable Kyma runtime, apply spec changes to it, and deprovision it, each step in its own
// file, all run by the FSM engine (pkg/fsm) so that every failure is retried, bounded and
// visible. The transition table is in machine.go. The controller's knobs, with their defaults
// and flags, are in options.go; Setup turns them into the engine's options.
//
// Besides the manager's client for the cluster the Runtimes live in, a step reaches the world
// only through the small interfaces of deps.go: Objects for the Gardener project, Clusters for
// the runtimes' own clusters (CachedClusters in the manager). Each step_*.go has a
// step_*_test.go beside it that runs the step against in-memory stores on a fake clock, in well
// under a second; machine_test.go runs both controllers' machines that way, deadlines included.
// The envtest suites in integration/ run the same steps end to end against kube-apiserver and
// the Gardener simulator.
package runtime
