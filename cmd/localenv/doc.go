// Command localenv is `make run`: the whole of Infrastructure Manager on one machine. It starts
// a local control plane (etcd and kube-apiserver from bin/k8s), the Gardener simulator with a
// fault scenario, Prometheus and Alertmanager where they are installed, and the manager
// in-process; applies the sample Runtimes of config/samples and prints a line each time one of
// them changes, until SIGINT or SIGTERM; then it stops everything in reverse order. See
// localenv --help.
package main
