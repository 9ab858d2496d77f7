package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// stack is what every run shares: the control plane in this process, the simulator as a
// process, and the collector of its request log. Each run has its own Gardener project and
// control-plane namespace, so runs leave each other alone without a clean-up in between.
type stack struct {
	dir, assets              string
	managerBin, gardensimBin string

	plane        *controlplane.ControlPlane
	cpConfig     *rest.Config
	cpKubeconfig string
	cp           client.WithWatch

	sim              *subprocess.Process
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
func startStack(ctx context.Context, dir string, p profile, projects []string) (*stack, error) {
	s := &stack{dir: dir, assets: testenv.Assets()}
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

// buildBinaries builds cmd/manager and cmd/gardensim into the work directory.
func (s *stack) buildBinaries(ctx context.Context) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	bin := filepath.Join(s.dir, "bin")
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin+string(filepath.Separator), "./cmd/manager", "./cmd/gardensim")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/manager ./cmd/gardensim: %w\n%s", err, out)
	}
	s.managerBin, s.gardensimBin = filepath.Join(bin, "manager"), filepath.Join(bin, "gardensim")
	return nil
}

// startControlPlane boots etcd and kube-apiserver with the CRDs and the admission policies.
func (s *stack) startControlPlane(ctx context.Context) error {
	out, err := os.OpenFile(filepath.Join(s.dir, "control-plane.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("control plane log: %w", err)
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		return err
	}
	root := testenv.RepoRoot()
	s.plane, err = controlplane.Start(ctx, controlplane.Options{
		Assets:        s.assets,
		CRDDirs:       []string{filepath.Join(root, "config", "crd", "bases")},
		AdmissionDir:  filepath.Join(root, "config", "admission"),
		Scheme:        scheme,
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
func (s *stack) startSimulator(ctx context.Context, p profile, projects []string) error {
	adminAddr, err := subprocess.LoopbackAddress(0)
	if err != nil {
		return err
	}
	s.simAdmin = "http://" + adminAddr
	s.gardenKubeconfig = filepath.Join(s.dir, "garden.kubeconfig")
	gardenAdmin := filepath.Join(s.dir, "garden-admin.kubeconfig")
	s.sim, err = subprocess.Start("gardensim",
		subprocess.Options{Log: filepath.Join(s.dir, "gardensim.log"), DeathSignal: syscall.SIGTERM}, s.gardensimBin,
		"--scenario", "healthy",
		"--shoot-mode", "shared",
		"--operation-duration", p.OperationDuration.String(),
		"--projects", strings.Join(projects, ","),
		"--assets", s.assets,
		"--admin-listen", adminAddr,
		"--kubeconfig-out", s.gardenKubeconfig,
		"--garden-admin-kubeconfig-out", gardenAdmin)
	if err != nil {
		return err
	}
	var cfg *rest.Config
	err = poll(ctx, 3*time.Minute, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		if s.sim.Exited() {
			return false, fmt.Errorf("gardensim exited: %w", s.sim.Err())
		}
		if err := subprocess.HTTPOK(ctx, s.simAdmin+"/healthz"); err != nil {
			return false, nil //nolint:nilerr // not up yet
		}
		mgrCfg, err := clientcmd.BuildConfigFromFlags("", s.gardenKubeconfig)
		if err != nil {
			return false, nil //nolint:nilerr // the file is written after start-up
		}
		s.gardenHost = hostOf(mgrCfg.Host)
		cfg, err = clientcmd.BuildConfigFromFlags("", gardenAdmin)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("gardensim not ready: %w\n%s", err, s.sim.LogTail(30))
	}
	if s.garden, err = client.New(cfg, client.Options{Scheme: s.cp.Scheme()}); err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	return nil
}

// stop ends the simulator and the control plane.
func (s *stack) stop() error {
	var errs []error
	if s.sim != nil {
		errs = append(errs, s.sim.Stop(time.Minute))
	}
	if s.plane != nil {
		errs = append(errs, s.plane.Stop())
	}
	return errors.Join(errs...)
}

// setFaults replaces the simulator's fault rules (nil removes them all).
func (s *stack) setFaults(ctx context.Context, rules any) error {
	return s.admin(ctx, "/rules", rules)
}

// admin PUTs body to the simulator's admin API, or DELETEs the path when body is nil.
func (s *stack) admin(ctx context.Context, path string, body any) error {
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
