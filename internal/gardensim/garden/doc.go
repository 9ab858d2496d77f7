// Package garden runs the Gardener simulator's garden: etcd and kube-apiserver with the
// aggregation layer configured, and Gardener's own API server (gardener-apiserver, built by
// 'make gardener-binaries' from the github.com/gardener/gardener module) as a child process
// on the same etcd, registered as the APIServices of Gardener's API groups. Every Gardener
// object the simulator and the manager read or write is therefore stored, defaulted,
// validated and admitted by Gardener's code. Start returns once Shoots can be listed
// through kube-apiserver; Stop ends the processes in reverse order.
package garden
