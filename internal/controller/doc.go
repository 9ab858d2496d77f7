// Package controller holds what the Runtime and the GardenerCluster controllers share:
// EngineOptions, the knobs of both controllers and their FSM engines, with their defaults,
// flags and checks. Each controller package owns its own knobs in its options.go; the manager
// embeds them all and only wires.
package controller
