// Package subprocess runs the programs that the local environment and the end-to-end and chaos
// suites start as child processes (Prometheus, Alertmanager, the simulator, manager replicas):
// each in a process group of its own, so that a Ctrl-C in a terminal reaches only the parent,
// which stops its children in turn, and so that a stop reaches whatever the child started; with
// a death signal, so that a parent that crashes or times out leaves no orphan behind; and with
// its output appended to a log file that failure messages quote the end of. It also waits for a
// child to serve HTTP, and finds free loopback ports to give children to listen on.
package subprocess
