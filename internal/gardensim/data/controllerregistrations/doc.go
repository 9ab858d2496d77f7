// Package controllerregistrations embeds the ControllerRegistrations the
// Gardener simulator installs into its garden (core.gardener.cloud/v1beta1,
// cluster-scoped): one per extension, named as Gardener's extensions name
// theirs, registering the provider types of the simulator's CloudProfiles
// (ControlPlane, Infrastructure, Worker, DNSRecord, BackupBucket,
// BackupEntry), the networking, operating system and container runtime types
// its shoots use, and the Extension types Infrastructure Manager writes. Admission takes from them
// the kinds and types a shoot may use, as Gardener's ExtensionValidator plugin
// does. Read parses them.
package controllerregistrations
