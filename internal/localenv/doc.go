// Package localenv is the machinery of `make run` (cmd/localenv): it starts a local control plane
// (etcd and kube-apiserver from bin/k8s, with the project's CRDs and admission policies), creates
// the sample Runtimes, runs Prometheus and Alertmanager when they are installed, receives their
// alert notifications, and turns every change of a Runtime into one line of progress. It is for
// a developer's machine only: nothing in it is used by the manager in production.
package localenv
