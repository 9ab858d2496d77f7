package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// suite is what every run shares: the control plane in this process, the simulator as a
// process, and the collector of its request log. Each run has its own Gardener project and
// control-plane namespace, so runs leave each other alone without a clean-up in between.
type suite struct {
	dir, assets              string
	managerBin, gardensimBin string
	// baselineBin is the baseline's manager (test/bench/baseline).
	baselineBin string
	// parts stops the simulator and the control plane, in reverse start order.
	parts stack.Stack

	plane        *controlplane.ControlPlane
	cpConfig     *rest.Config
	cpKubeconfig string
	cp           client.WithWatch

	sim              *stack.SimulatorProcess
	simAdmin         string
	gardenKubeconfig string
	// gardenHost is the Gardener API as the manager reaches it (the simulator's front proxy).
	gardenHost string
	// garden reads the garden API server directly, unseen by faults and the request log.
	garden client.Client

	log *requestLog
}

// startStack builds the binaries and starts the control plane and the simulator with one
// project per run.
func startStack(ctx context.Context, dir string, p profile, projects []string) (*suite, error) {
	s := &suite{dir: dir, assets: testenv.Assets()}
	if err := controlplane.CheckAssets(s.assets); err != nil {
		return nil, err
	}
	if err := s.buildBinaries(ctx); err != nil {
		return nil, err
	}
	if err := s.startControlPlane(ctx); err != nil {
		return s, err
	}
	if err := s.startSimulator(ctx, p, projects); err != nil {
		return s, err
	}
	s.log = newRequestLog(s.simAdmin)
	go s.log.run(ctx)
	return s, nil
}

// buildBinaries builds cmd/manager, cmd/gardensim and the baseline into the work directory.
func (s *suite) buildBinaries(ctx context.Context) error {
	bins, err := stack.Build(ctx, testenv.RepoRoot(), filepath.Join(s.dir, "bin"), "./cmd/manager", "./cmd/gardensim", "./test/bench/baseline")
	if err != nil {
		return err
	}
	s.managerBin, s.gardensimBin, s.baselineBin = bins[0], bins[1], bins[2]
	return nil
}

// startControlPlane boots etcd and kube-apiserver with the CRDs and the admission policies.
func (s *suite) startControlPlane(ctx context.Context) error {
	out, err := s.parts.CreateFile(filepath.Join(s.dir, "control-plane.log"))
	if err != nil {
		return err
	}
	s.plane, err = s.parts.StartControlPlane(ctx, stack.ControlPlaneOptions{
		Root:          testenv.RepoRoot(),
		Assets:        s.assets,
		ProcessOutput: out,
		StartTimeout:  2 * time.Minute,
		StopTimeout:   15 * time.Second,
	})
	if err != nil {
		return err
	}
	s.cpConfig, s.cp = s.plane.Config, s.plane.Client
	s.cpKubeconfig = filepath.Join(s.dir, "control-plane.kubeconfig")
	return localenv.WriteKubeconfig(s.cpKubeconfig, "bench", "default", s.cpConfig)
}

// startSimulator runs cmd/gardensim with shared shoot clusters, its admission on, and the
// projects of every run.
func (s *suite) startSimulator(ctx context.Context, p profile, projects []string) error {
	var err error
	s.sim, err = s.parts.StartSimulatorProcess(ctx, stack.SimulatorProcessOptions{
		Binary: s.gardensimBin, Dir: s.dir, Assets: s.assets,
		Args: []string{
			"--scenario", "healthy",
			"--shoot-mode", "shared",
			"--operation-duration", p.OperationDuration.String(),
			"--projects", strings.Join(projects, ","),
		},
	})
	if err != nil {
		return err
	}
	s.simAdmin, s.gardenKubeconfig, s.gardenHost = s.sim.AdminURL, s.sim.Kubeconfig, hostOf(s.sim.Config.Host)
	if s.garden, err = client.New(s.sim.GardenAdmin, client.Options{Scheme: s.cp.Scheme()}); err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	return nil
}

// stop ends the simulator and the control plane.
func (s *suite) stop() error { return s.parts.Stop() }

// setFaults replaces the simulator's fault rules (nil removes them all).
func (s *suite) setFaults(ctx context.Context, rules any) error {
	return s.admin(ctx, "/rules", rules)
}

// admin PUTs body to the simulator's admin API, or DELETEs the path when body is nil.
func (s *suite) admin(ctx context.Context, path string, body any) error {
	method, data := http.MethodDelete, []byte(nil)
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return fmt.Errorf("encode %s: %w", path, err)
		}
		method = http.MethodPut
	}
	req, err := http.NewRequestWithContext(ctx, method, s.simAdmin+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 300 {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(msg.String()))
	}
	return nil
}

// requestLog copies the simulator's request log, which keeps only the last 100,000 requests,
// into this process while the benchmark runs.
type requestLog struct {
	admin string

	mu      sync.Mutex
	records []proxy.RequestRecord
	next    uint64
	dropped uint64
	err     error
}

func newRequestLog(admin string) *requestLog { return &requestLog{admin: admin} }

// run fetches new records every 200ms until ctx ends.
func (l *requestLog) run(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if err := l.fetch(ctx); err != nil && ctx.Err() == nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fetch reads every record after the last one it has.
func (l *requestLog) fetch(ctx context.Context) error {
	for {
		l.mu.Lock()
		next := l.next
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/requests?after=%d&limit=10000", l.admin, next), nil)
		if err != nil {
			cancel()
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			return fmt.Errorf("request log: %w", err)
		}
		var page proxy.RequestPage
		err = json.NewDecoder(resp.Body).Decode(&page)
		_ = resp.Body.Close()
		cancel()
		if err != nil {
			return fmt.Errorf("request log: decode: %w", err)
		}
		l.mu.Lock()
		l.records = append(l.records, page.Records...)
		l.next, l.dropped = page.Next, l.dropped+page.Dropped
		l.mu.Unlock()
		if len(page.Records) < 10000 {
			return nil
		}
	}
}

// sync fetches what the log holds now, so that a window that just ended is complete.
func (l *requestLog) sync(ctx context.Context) error {
	// A request is logged when it ends: give the ones in flight a moment.
	time.Sleep(300 * time.Millisecond)
	return l.fetch(ctx)
}

// between returns the records of requests that arrived in [from, to).
func (l *requestLog) between(from, to time.Time) []proxy.RequestRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []proxy.RequestRecord
	for _, r := range l.records {
		if !r.Time.Before(from) && r.Time.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// problem reports a gap in the copy: a fetch that failed last, or records the simulator
// dropped before they were copied.
func (l *requestLog) problem() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped > 0 {
		return fmt.Errorf("the simulator's request log dropped %d records before they were copied", l.dropped)
	}
	return l.err
}

// hostOf is the host:port of an API server URL.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Host
}

// poll calls cond every interval until it returns true or an error, or the timeout passes.
func poll(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, cond)
	if err != nil {
		return fmt.Errorf("not within %s: %w", timeout, err)
	}
	return nil
}
