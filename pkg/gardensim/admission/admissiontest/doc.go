// Package admissiontest builds shoots that the simulated Gardener admits —
// one valid shoot per provider, with the infrastructureConfig and
// controlPlaneConfig its extension requires — and an in-memory Env of the
// simulator's CloudProfiles and a few ConfigMaps, for tests of admission and
// of the simulator.
package admissiontest
