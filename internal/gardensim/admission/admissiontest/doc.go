// Package admissiontest builds shoots that the simulated Gardener admits —
// one valid shoot per provider, with the infrastructureConfig and
// controlPlaneConfig its extension requires, and WithLandscape, which adds
// what a landscape's configuration gives a shoot — and an in-memory Env of
// the simulator's CloudProfiles, Seeds and ControllerRegistrations and a few
// Secrets and ConfigMaps, for tests of admission and of the simulator.
package admissiontest
