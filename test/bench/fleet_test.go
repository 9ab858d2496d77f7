package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// sampleRuntime is what every benchmark Runtime is made from: the shipped AWS sample, which has
// an OIDC provider and so a structured-auth ConfigMap in the garden besides its shoot.
var sampleRuntime = filepath.Join("config", "samples", "runtime-aws.yaml")

// generate makes n Runtimes for run r, numbered from first: names and ids of their own, all in
// the run's namespace.
func generate(r run, first, n int) ([]*infrav1.Runtime, error) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), sampleRuntime))
	if err != nil {
		return nil, fmt.Errorf("read sample runtime: %w", err)
	}
	base := &infrav1.Runtime{}
	if err := yaml.UnmarshalStrict(data, base); err != nil {
		return nil, fmt.Errorf("decode %s: %w", sampleRuntime, err)
	}
	out := make([]*infrav1.Runtime, 0, n)
	for i := first; i < first+n; i++ {
		rt := base.DeepCopy()
		id := fmt.Sprintf("%s-%04d", r.name, i)
		shoot := fmt.Sprintf("s%04d", i)
		rt.Name, rt.Namespace = id, r.name
		rt.Labels[infrav1.LabelRuntimeID] = id
		rt.Labels[infrav1.LabelInstanceID] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		rt.Labels[infrav1.LabelShootName] = shoot
		rt.Labels[infrav1.LabelKymaName] = id
		// One subaccount for the whole run, as one customer's runtimes.
		rt.Labels[infrav1.LabelSubaccountID] = "bench-" + r.name
		rt.Spec.Shoot.Name = shoot
		out = append(out, rt)
	}
	return out, nil
}

// create creates the Runtimes at once (16 at a time) and returns when the last create returned.
func (s *suite) create(ctx context.Context, runtimes []*infrav1.Runtime) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, rt := range runtimes {
		g.Go(func() error {
			if err := s.cp.Create(ctx, rt.DeepCopy()); err != nil {
				return fmt.Errorf("create runtime %s: %w", rt.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// tracker watches the Runtimes of a namespace and records when each first was Ready and whether
// it was ever Failed, from every status the API server stored.
type tracker struct {
	cancel context.CancelFunc

	mu      sync.Mutex
	seen    map[string]*infrav1.Runtime
	ready   map[string]time.Time
	failed  map[string]time.Time
	changed chan struct{}
}

// track starts a watch on the Runtimes of namespace ns.
func (s *suite) track(ctx context.Context, ns string) (*tracker, error) {
	ctx, cancel := context.WithCancel(ctx)
	c, err := cache.New(s.cpConfig, cache.Options{Scheme: s.cp.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("runtime cache: %w", err)
	}
	t := &tracker{cancel: cancel, seen: map[string]*infrav1.Runtime{}, ready: map[string]time.Time{},
		failed: map[string]time.Time{}, changed: make(chan struct{}, 1)}
	inf, err := c.GetInformer(ctx, &infrav1.Runtime{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("runtime informer: %w", err)
	}
	observe := func(obj any) {
		if rt, ok := obj.(*infrav1.Runtime); ok {
			t.observe(rt)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("runtime handler: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("runtime cache of %s did not sync", ns)
	}
	return t, nil
}

func (t *tracker) observe(rt *infrav1.Runtime) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen[rt.Name] = rt
	switch rt.Status.State {
	case fsmv1.StateReady:
		if _, ok := t.ready[rt.Name]; !ok {
			t.ready[rt.Name] = now
		}
	case fsmv1.StateFailed:
		if _, ok := t.failed[rt.Name]; !ok {
			t.failed[rt.Name] = now
		}
	}
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// stop ends the watch.
func (t *tracker) stop() { t.cancel() }

// count returns how many Runtimes match cond in their last stored status.
func (t *tracker) count(cond func(*infrav1.Runtime) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, rt := range t.seen {
		if cond(rt) {
			n++
		}
	}
	return n
}

// readyNow counts the Runtimes whose last stored state is Ready.
func (t *tracker) readyNow() int {
	return t.count(func(rt *infrav1.Runtime) bool { return rt.Status.State == fsmv1.StateReady })
}

// waitFor waits until cond holds for n Runtimes, or the timeout passes; it returns whether it
// held and when.
func (t *tracker) waitFor(ctx context.Context, n int, timeout time.Duration, cond func(*infrav1.Runtime) bool) (bool, time.Time) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if t.count(cond) >= n {
			return true, time.Now()
		}
		select {
		case <-ctx.Done():
			return false, time.Now()
		case <-deadline.C:
			return false, time.Now()
		case <-t.changed:
		case <-tick.C:
		}
	}
}

// readyTimes returns when each Runtime that was Ready first was, and failedCount how many were
// ever Failed.
func (t *tracker) readyTimes() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Time, len(t.ready))
	for k, v := range t.ready {
		out[k] = v
	}
	return out
}

func (t *tracker) failedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failed)
}

// snapshot returns the last stored status of every Runtime.
func (t *tracker) snapshot() map[string]*infrav1.Runtime {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]*infrav1.Runtime, len(t.seen))
	for k, v := range t.seen {
		out[k] = v
	}
	return out
}

// isReady holds for a Runtime in state Ready.
func isReady(rt *infrav1.Runtime) bool { return rt.Status.State == fsmv1.StateReady }
