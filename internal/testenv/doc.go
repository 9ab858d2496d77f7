// Package testenv starts the real control plane of the integration tests: etcd and
// kube-apiserver from bin/k8s (KUBEBUILDER_ASSETS), with the project's CRDs installed and its
// admission policies applied and in force. Suites start it once per package in TestMain. It is
// the tests' face of package controlplane, which starts it, and package manifest, which reads
// the fixtures; it adds what only tests want (Eventually, the fixtures' paths, AssertSubset).
// Suites that also need the simulator or the manager start their parts with package stack.
// They take Scheme, SetLogger, RepoRoot and Assets from here.
package testenv
