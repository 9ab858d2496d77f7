// Package controlplane starts the local Kubernetes control planes of this repository: etcd and
// kube-apiserver from the envtest binaries (bin/k8s, KUBEBUILDER_ASSETS), with CRDs installed
// from directories or as objects and, when asked, admission policies applied and in force
// before Start returns. The integration tests (internal/testenv), package stack (for `make run`
// and the suites) and the Gardener simulator's garden all start theirs here, and create their
// namespaces, objects and kubeconfigs with the helpers of this package.
package controlplane
