// Package integration holds the envtest suite of the FSM engine: a small example controller on
// the engine, run by controller-runtime managers against a real API server, shows that the retry
// record is durable across manager restarts and that exhaustion is visible.
package integration
