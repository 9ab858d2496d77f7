package bench_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// p3Result is one restart run.
type p3Result struct {
	policy policy
	n      int
	// inBackoff is how many Runtimes had a persisted next retry time at the kill.
	inBackoff int
	// first10s are the Gardener requests in the first 10 seconds after the new process was
	// started.
	first10s requestCount
	// retried counts the Runtimes whose shoot was asked to retry within the observation window
	// after the restart; early those among them asked before the next retry time that their
	// status had persisted.
	retried, early int
	observe        time.Duration
}

// runP3 makes Gardener throttle every apply of the run's shoots, waits until
// every Runtime is in retry backoff with a persisted next retry time, SIGKILLs the manager and
// starts a new one at once, and watches which retries run before their time.
func (s *suite) runP3(ctx context.Context, p profile, r run) (p3Result, error) {
	res := p3Result{policy: r.policy, n: p.P3Runtimes, observe: p.P3Observe}
	if err := s.plane.CreateNamespace(ctx, r.name); err != nil {
		return res, err
	}
	// Gardener throttles every apply of the run's shoots: ApplyShoot fails at once, and the
	// engine persists when it tries again. No Retry-After header, which client-go would follow
	// by itself; the breaker does not count a 429.
	throttle := []fault.Rule{{
		Name:  "throttled-" + r.name,
		Match: fault.Match{Verbs: []string{"patch"}, Resource: "shoots", Namespace: gardensim.ProjectNamespace(r.name)},
		Fault: fault.Fault{Type: fault.TypeStatus, Codes: []int{429}, RetryAfterHeader: ptr.To(false)},
	}}
	if err := s.setFaults(ctx, throttle); err != nil {
		return res, err
	}
	defer func() { _ = s.setFaults(context.WithoutCancel(ctx), nil) }()
	runtimes, err := generate(r, 0, res.n)
	if err != nil {
		return res, err
	}
	t, err := s.track(ctx, r.name)
	if err != nil {
		return res, err
	}
	defer t.stop()
	m, err := s.startManager(ctx, r)
	if err != nil {
		return res, err
	}
	if err := s.create(ctx, runtimes); err != nil {
		_ = m.stop()
		return res, err
	}
	inBackoff := func(rt *infrav1.Runtime) bool {
		return rt.Status.Retry != nil && rt.Status.Retry.NextRetryAt != nil
	}
	// At 5 QPS the baseline's retries every 15s can starve Runtimes that have not failed once
	// yet: at its cut it is killed with those in backoff then, which the report says.
	if ok, _ := t.waitFor(ctx, res.n, p.timeout(r.policy), inBackoff); !ok && (r.policy != baseline || t.count(inBackoff) == 0) {
		_ = m.stop()
		return res, fmt.Errorf("%s: %d of %d Runtimes in backoff within %s", r.name, t.count(inBackoff), res.n, p.timeout(r.policy))
	}
	if err := m.proc.Kill(); err != nil {
		return res, fmt.Errorf("kill manager: %w", err)
	}
	<-m.proc.Done()
	// What the status holds once the old process is gone: the next retry time of each shoot.
	due := map[string]time.Time{}
	for _, rt := range t.snapshot() {
		if inBackoff(rt) {
			due[rt.Spec.Shoot.Name] = rt.Status.Retry.NextRetryAt.Time
		}
	}
	res.inBackoff = len(due)
	restart := time.Now()
	m, err = s.startManager(ctx, r)
	if err != nil {
		return res, err
	}
	defer func() { _ = m.stop() }()
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(res.observe):
	}
	if err := s.log.sync(ctx); err != nil {
		return res, err
	}
	res.first10s = countRequests(s.log.between(restart, restart.Add(10*time.Second)))
	// A retry is the next apply of the shoot; the first one after the restart counts.
	first := map[string]time.Time{}
	for _, rec := range s.log.between(restart, time.Now()) {
		if rec.Verb != "patch" || rec.Resource != "shoots" || rec.Subresource != "" || rec.Namespace != gardensim.ProjectNamespace(r.name) {
			continue
		}
		if _, ok := first[rec.Name]; !ok {
			first[rec.Name] = rec.Time
		}
	}
	res.retried = len(first)
	for shoot, at := range first {
		// NextRetryAt is stored to the second, rounded up; a retry a moment before it is on time.
		if d, ok := due[shoot]; ok && at.Before(d.Add(-time.Second)) {
			res.early++
		}
	}
	return res, nil
}
