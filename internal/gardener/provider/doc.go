// Package provider builds the provider-specific parts of a Shoot, spec.provider.infrastructureConfig
// and spec.provider.controlPlaneConfig, for aws, azure, gcp, openstack and alicloud from a
// Runtime's node network and worker zones, with the provider extensions' own API types. New
// shoots get the subnet layout that shoots made by the upstream Kyma Infrastructure Manager
// already have, so that those shoots can be adopted: a running shoot's networks are immutable.
// Existing configs are returned byte for byte unless the Runtime brings a zone the
// infrastructureConfig lacks; then only that zone's subnets are appended, after every existing
// zone, and every other field is kept. The package is pure: it reads no API and keeps no state,
// and its errors are wrapped sentinels (ErrNodesTooSmall, ErrMalformedExisting, ...) that no
// retry can fix, for the caller to report as user errors.
package provider
