// Package fsm runs an object through a finite state machine of small steps and owns what happens
// when a step fails.
//
// A step is a function that observes the world, acts, and returns an Outcome: go to another step,
// wait for an external process, done, or fail with an error. A step never decides what an error
// means: the Engine classifies it (package retry), applies the step's retry policy, persists the
// retry record in the object's status so that restarts and leader changes neither reset budgets
// nor retry everything at once, enforces the deadlines of waiting steps, marks the object Failed
// when a step is exhausted, terminal or timed out, derives the object's Ready condition, records
// events and metrics, and turns all of it into one ctrl.Result. The engine is generic over the
// object type: an object embeds the status the engine owns from package fsmv1 (pkg/fsm/api/v1),
// and its controller names what belongs to its own API (the manual-retry annotation, the
// per-object metric series and their labels, the keys it logs). The Reconciler in this package is
// the thin layer that fetches the object and patches its status in one call.
package fsm
