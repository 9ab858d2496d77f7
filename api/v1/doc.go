// Package v1 contains the API of Infrastructure Manager: the Runtime, which
// describes one Kyma runtime and the Gardener shoot behind it, and the
// GardenerCluster, which keeps that runtime's admin kubeconfig fresh.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructuremanager.kyma-project.io
package v1
