// Package testenv starts the real control plane of the integration tests: etcd and
// kube-apiserver from bin/k8s (KUBEBUILDER_ASSETS), with the project's CRDs installed and its
// admission policies applied and in force. Suites start it once per package in TestMain.
package testenv
