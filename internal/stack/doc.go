// Package stack starts and stops the parts of a local Infrastructure Manager installation.
// The parts are the control plane, the Gardener simulator, the manager and monitoring.
// The control plane is etcd and kube-apiserver with the CRDs and the admission policies.
// The simulator runs in this process or as the gardensim command.
// The manager runs in this process; the suites that run it as a process keep that code.
// Monitoring is Prometheus and Alertmanager.
//
// A Stack remembers what it started and stops it in reverse order.
// The local environment (cmd/localenv) and every suite start their parts here.
// Each caller starts the parts it needs, in its own order.
// Options hold what differs between the callers: timeouts, logs and flags.
package stack
