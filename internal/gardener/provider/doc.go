// Package provider builds the provider-specific parts of a Shoot (infrastructureConfig and
// controlPlaneConfig) for each hyperscaler from a Runtime's node network and worker zones,
// with the provider extensions' own API types.
package provider
