package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
)

// p1Result is one provisioning run.
type p1Result struct {
	policy policy
	n      int
	// complete is whether every Runtime was Ready within the run's timeout; elapsed is the time
	// from the first create to the last Ready, or to the timeout.
	complete bool
	elapsed  time.Duration
	// toReady is each Ready Runtime's time from the first create, sorted.
	toReady []time.Duration
	// requests counts what reached Gardener during the run.
	requests requestCount
}

// readyCount is how many Runtimes were Ready.
func (r p1Result) readyCount() int { return len(r.toReady) }

// requestCount is the Gardener requests of a window by verb, and the writes among them.
type requestCount struct {
	byVerb map[string]int
	total  int
	writes int
	// failed are the ones answered with an error or no reply.
	failed int
}

// writeVerbs change something in Gardener (adminkubeconfig creates a credential).
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "adminkubeconfig"}

func countRequests(records []proxy.RequestRecord) requestCount {
	c := requestCount{byVerb: map[string]int{}}
	for _, r := range records {
		c.byVerb[r.Verb]++
		c.total++
		if slices.Contains(writeVerbs, r.Verb) {
			c.writes++
		}
		if r.Code == 0 || r.Code >= 400 {
			c.failed++
		}
	}
	return c
}

// perRuntime divides a count by the run's size.
func perRuntime(n, size int) float64 {
	if size == 0 {
		return 0
	}
	return float64(n) / float64(size)
}

// runP1 creates n Runtimes at once and waits until all are Ready; this manager's largest fleet
// stays for P4. A CPU profile of this manager covers the middle of the run when prof is set.
func (s *suite) runP1(ctx context.Context, p profile, r run, n int, prof string) (p1Result, error) {
	res := p1Result{policy: r.policy, n: n}
	if err := s.plane.CreateNamespace(ctx, r.name); err != nil {
		return res, err
	}
	runtimes, err := generate(r, 0, n)
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
	defer func() { _ = m.stop() }()
	start := time.Now()
	if err := s.create(ctx, runtimes); err != nil {
		return res, err
	}
	profDone := make(chan error, 1)
	if prof != "" {
		// The first half of the expected run: past the creates, while shoots are written.
		secs := max(5, int(max(p.OperationDuration, time.Duration(n)*time.Second/20).Seconds()/2))
		go func() {
			profDone <- m.profileTo(ctx, fmt.Sprintf("profile?seconds=%d", secs), filepath.Join(profileDir(s.dir), prof), time.Duration(secs+30)*time.Second)
		}()
	} else {
		profDone <- nil
	}
	ok, end := t.waitFor(ctx, n, p.p1Timeout(r.policy, n), isReady)
	res.complete = ok
	res.elapsed = end.Sub(start)
	for _, at := range t.readyTimes() {
		res.toReady = append(res.toReady, at.Sub(start))
	}
	slices.Sort(res.toReady)
	if err := s.log.sync(ctx); err != nil {
		return res, err
	}
	res.requests = countRequests(s.log.between(start, end))
	if err := <-profDone; err != nil {
		return res, fmt.Errorf("CPU profile: %w", err)
	}
	return res, nil
}

// ideal is the P1 bound for n runtimes at qps with w Gardener writes each.
func ideal(p profile, n int, w, qps float64) time.Duration {
	return max(p.OperationDuration, time.Duration(float64(n)*w/qps*float64(time.Second)))
}

// quantile returns the q-quantile (0..1) of sorted durations; 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}
