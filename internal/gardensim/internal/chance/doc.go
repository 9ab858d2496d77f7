// Package chance is the one source of randomness of the Gardener simulator:
// a seeded generator safe for concurrent use, so that a run with a fixed seed
// and the same sequence of requests injects the same faults and the same
// lifecycle outcomes.
package chance
