// Package bench holds the landscape-scale benchmarks (`make bench`): it builds the real binaries
// (cmd/manager, cmd/gardensim and the baseline), runs them as processes next to a control plane
// (etcd and kube-apiserver) that the test owns, and runs each scenario twice, once with this
// manager's policy and once with a baseline that requeues as the upstream manager does.
//
// The baseline is the command in test/bench/baseline. It builds the same manager through
// internal/manager with upstream's settings: fixed 15s after errors, polls of 60s, 30s and 90s,
// no jitter, no shoot watch, Gardener at 5 QPS burst 5, no circuit breaker. Upstream keeps its
// retry times in memory only. The manager persists them, so at its start the baseline sets every
// pending retry time to now, before its manager runs. That costs one status patch per object in
// backoff, which the manager's metrics do not count.
//
// Every number comes from the run: the simulator's request log counts what reached Gardener, a
// watch on the Runtimes times their states, /proc gives the manager's memory and CPU, its own
// client metrics count the requests to the control plane and the runtime clusters, and a real
// Prometheus with the shipped rules says which alerts would fire.
//
// Scenarios (sizes and durations are flags after -args, see profile_test.go):
//
//   - P1 provisioning: N Runtimes created at once; time to all Ready against the ideal bound
//     max(operation duration, N x Gardener writes per runtime / Gardener QPS), and the Gardener
//     requests per runtime by verb.
//   - P2 outage: Runtimes in flight when Gardener answers 503 to everything for a while; the
//     request rate during and after, Failed runtimes, per-runtime alerts, time to all Ready
//     after recovery.
//   - P3 restart: Runtimes in retry backoff (Gardener throttles their shoots' applies) when the
//     manager is SIGKILLed and started again; Gardener requests in the first 10s and retries
//     that ran before the next retry time the status had persisted.
//   - P4 quiet fleet: Ready Runtimes for a window, re-checked within it; the manager's RSS and
//     CPU, Gardener, runtime-cluster and control-plane requests per minute, and writes. The
//     window begins one re-check interval after the manager started, after its first re-check
//     of every Runtime, which the report gives on its own. With -p4-container-limit this
//     manager runs in a memory cgroup with that limit, as in a container (it needs root), and
//     the report adds the kernel's account of the cgroup: usage, working set, the charges that
//     met the limit, OOM kills and the major page faults of the executable's pages it dropped.
//
// The default profile is short (a few Runtimes per scenario, no timing targets) and runs in
// `make test` to keep the harness working; `make bench` runs the full profile and writes
// docs/benchmarks/README.md with the tables and the PNG plots. The test is skipped with -short.
package bench
