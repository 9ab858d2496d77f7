// Package runtime is the Runtime controller: the steps that turn a Runtime into a Gardener shoot
// and a usable Kyma runtime, apply spec changes to it, and deprovision it, each step in its own
// file, all run by the FSM engine (pkg/fsm) so that every failure is retried, bounded and
// visible. The transition table is in machine.go.
package runtime
