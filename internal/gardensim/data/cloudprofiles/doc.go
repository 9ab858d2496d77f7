// Package cloudprofiles embeds the CloudProfiles the Gardener simulator
// serves (core.gardener.cloud/v1beta1, cluster-scoped) and admits shoots
// against: one profile per provider, named as Kyma names them (aws, az, gcp,
// converged-cloud-kyma, alicloud), with the Kubernetes versions, machine
// images, machine types, volume types, regions and zones a shoot may use.
// Read parses them; the simulator derives its default Seeds from their
// regions.
package cloudprofiles
