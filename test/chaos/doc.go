// Package chaos holds the black-box chaos suite: it builds the real binaries (cmd/manager and
// cmd/gardensim), runs them as separate processes next to a control plane (etcd and
// kube-apiserver) that the test owns, and provisions Runtimes while it breaks things: the
// simulator answers a share of all Gardener calls with transient faults (500, 503, dropped
// connections, lost replies) and malformed bodies, the manager processes (two replicas with
// leader election) are SIGKILLed at random moments and restarted, the leader among them at least
// once, and the control plane's kube-apiserver is stopped and started again on the same port
// with the same etcd.
//
// Throughout, a watch on the Runtimes records every status the API server stores and the
// simulator's request log records every call that reached Gardener. At the end the suite checks
// its invariants (see invariants_test.go) and prints a table of them with the run's figures.
//
// The default profile is short (10 Runtimes, 3 kills) and runs in `make test`; `make chaos` runs
// the full one (50 Runtimes, 10 kills, a random seed that it prints). Every knob is a flag after
// -args or a CHAOS_* environment variable, e.g.
//
//	go test ./test/chaos -run TestChaos -count=1 -v -timeout 60m -args -runtimes=50 -kills=10 -seed=7
//
// The test is skipped with -short.
package chaos
