// Package e2e holds the end-to-end alerting test: a real kube-apiserver and etcd, the Gardener
// simulator, the manager, and a real Prometheus and Alertmanager, loaded with the shipped rules
// (config/prometheus/rules.yaml, durations scaled down) and the shipped routing
// (config/alertmanager/alertmanager.yaml, webhook URLs pointed at the test's receivers). It drives
// runtimes into failure and back, and Gardener into an outage that the manager's circuit breaker
// reports, and asserts which notifications reach the on-call and the development-team webhooks,
// and when. It also searches the logs, events, statuses, metrics and alerts of the run for the
// kubeconfigs and tokens the run issued. Prometheus and Alertmanager are the binaries that the
// environment variables PROMETHEUS and ALERTMANAGER name, else the builds of 'make
// monitoring-tools' in bin/monitoring (Prometheus 3, Alertmanager 0.35; make test-go builds them
// and sets the variables), else the ones on PATH (the Debian packages'). The test is skipped
// with -short.
package e2e
