package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// runMainEnv makes the test binary run the manager's main instead of the tests, so that a test
// can run the manager as a process of its own without building it.
const runMainEnv = "INFRASTRUCTURE_MANAGER_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestUnreachableAPIServer runs the manager against an API server address nobody listens on: it
// must say why it gets nowhere, and end within its grace period after SIGTERM.
func TestUnreachableAPIServer(t *testing.T) {
	addr, err := subprocess.LoopbackAddress(0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s"}}]
users: [{name: u, user: {token: t0ken}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, addr)
	if err := os.WriteFile(kc, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	const shutdown = time.Second
	log := filepath.Join(dir, "manager.log")
	p, err := subprocess.Start("manager", subprocess.Options{Log: log, Env: []string{runMainEnv + "=1", "KUBECONFIG=" + kc}},
		os.Args[0], "--gardener-kubeconfig", kc, "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--graceful-shutdown-timeout", shutdown.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })

	why := "cannot reach the API server"
	err = testenv.Eventually(t.Context(), 30*time.Second, 50*time.Millisecond, func(context.Context) (bool, error) {
		out, err := os.ReadFile(log)
		return strings.Contains(string(out), why) && strings.Contains(string(out), "connection refused"), err
	})
	if err != nil {
		t.Fatalf("no line says %q with the reason: %v\n%s", why, err, p.LogTail(20))
	}
	if err := syscall.Kill(p.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	grace := shutdown + shutdownMargin
	select {
	case <-p.Done():
	case <-time.After(grace + 5*time.Second):
		t.Fatalf("still running %s after SIGTERM, want it gone within %s\n%s", grace+5*time.Second, grace, p.LogTail(20))
	}
	if out := p.LogTail(5); !strings.Contains(out, "did not stop within") {
		t.Errorf("the last lines do not say it was stopped: %s", out)
	}
}

// blocked is a manager whose Start returns only when release is closed, or at once with err.
type blocked struct {
	release chan struct{}
	err     error
}

func (b blocked) Start(context.Context) error {
	if b.err != nil {
		return b.err
	}
	<-b.release
	return nil
}

func TestStartUntilStopped(t *testing.T) {
	failed := errors.New("no leader")
	cases := []struct {
		name    string  // how the manager behaves
		manager blocked // the manager
		cancel  bool    // whether the signal comes
		want    string  // a fragment of the error; empty for none
	}{
		{"a manager that fails on its own", blocked{err: failed}, false, "run manager: no leader"},
		{"a manager that stops after the signal", blocked{release: closed()}, true, ""},
		{"a manager that does not stop", blocked{release: make(chan struct{})}, true, "did not stop within 10ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			err := startUntilStopped(ctx, tc.manager, 10*time.Millisecond)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// closed is a closed channel.
func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// TestWatchReachability: every failed probe is logged with its reason, a recovery once, a
// reachable API server not at all.
func TestWatchReachability(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	results := []error{errors.New("connection refused"), errors.New("connection refused"), nil, nil}
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	probe := func(context.Context) error {
		err := results[calls]
		calls++
		if calls == len(results) {
			cancel()
		}
		return err
	}
	watchReachability(ctx, log, "https://api", probe, time.Millisecond)
	want := []string{"cannot reach the API server", "cannot reach the API server", "reached the API server again"}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d: %q", len(lines), len(want), lines)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) || (i < 2 && !strings.Contains(lines[i], "connection refused")) {
			t.Errorf("line %d %q does not say %q (with the reason)", i, lines[i], w)
		}
	}
}

// TestGardenKubeconfigIsInlineOnly: the Gardener kubeconfig, mounted from a Secret, is refused
// when it reads a file, naming the file and the field.
func TestGardenKubeconfigIsInlineOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "https://garden.example.com"}}]
users: [{name: robot, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}]
contexts: [{name: garden, context: {cluster: garden, user: robot}}]
current-context: garden
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadGardenKubeconfig(path)
	if !kubeconfig.IsRefused(err) || !strings.Contains(err.Error(), "file "+path) || !strings.Contains(err.Error(), "users[robot].user.tokenFile") {
		t.Errorf("got %v, want a refusal naming %s and users[robot].user.tokenFile", err, path)
	}
}

// TestMemoryLimit: the process's limit comes from the flag, then GOMEMLIMIT, then the cgroup,
// own before root, v2 before v1; the heap's soft limit leaves the executable's pages out.
func TestMemoryLimit(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory/memory.limit_in_bytes", "9223372036854771712")
	write("memory/pod1/memory.limit_in_bytes", fmt.Sprint(300<<20))
	v1Self := "4:memory:/pod1\n3:cpu,cpuacct:/pod1\n"

	for _, tc := range []struct {
		name, flag, self string
		process, heap    int64
		source           string
	}{
		{name: "flag", flag: "150Mi", self: v1Self, process: 150 << 20, heap: 94 << 20, source: "--memory-limit"},
		{name: "small flag keeps half for the heap", flag: "64Mi", process: 64 << 20, heap: 32 << 20, source: "--memory-limit"},
		{name: "flag 0 is none", flag: "0", self: v1Self, source: "--memory-limit"},
		{name: "own v1 cgroup", self: v1Self, process: 300 << 20, heap: 244 << 20, source: filepath.Join(root, "memory/pod1/memory.limit_in_bytes")},
		{name: "root v1 without a limit", self: "4:memory:/elsewhere\n", source: filepath.Join(root, "memory/memory.limit_in_bytes") + " (none)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveMemoryLimit(tc.flag, noEnv, root, tc.self)
			if err != nil {
				t.Fatal(err)
			}
			if got.process != tc.process || got.heap != tc.heap || got.source != tc.source {
				t.Errorf("got %+v, want process %d heap %d from %q", got, tc.process, tc.heap, tc.source)
			}
		})
	}

	t.Run("v2 before v1", func(t *testing.T) {
		write("pod2/memory.max", fmt.Sprint(200<<20))
		got, err := resolveMemoryLimit("", noEnv, root, "4:memory:/pod1\n0::/pod2\n")
		if err != nil {
			t.Fatal(err)
		}
		if got.process != 200<<20 {
			t.Errorf("got %+v, want the v2 limit of 200Mi", got)
		}
	})
	t.Run("v2 max is none", func(t *testing.T) {
		write("pod3/memory.max", "max")
		got, err := resolveMemoryLimit("", noEnv, root, "0::/pod3\n")
		if err != nil || got.process != 0 {
			t.Errorf("got %+v, %v; want no limit", got, err)
		}
	})
	t.Run("GOMEMLIMIT wins over the cgroup", func(t *testing.T) {
		env := func(k string) (string, bool) { return "120MiB", k == "GOMEMLIMIT" }
		got, err := resolveMemoryLimit("", env, root, v1Self)
		if err != nil || got.process != 0 || got.source != "GOMEMLIMIT=120MiB" {
			t.Errorf("got %+v, %v; want GOMEMLIMIT reported and nothing derived", got, err)
		}
	})
	for _, bad := range []string{"lots", "-1Mi"} {
		if _, err := resolveMemoryLimit(bad, noEnv, root, ""); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
			t.Errorf("--memory-limit=%s: error %v, want one naming the flag", bad, err)
		}
	}
	write("pod4/memory.max", "lots")
	if _, err := resolveMemoryLimit("", noEnv, root, "0::/pod4\n"); err == nil || !strings.Contains(err.Error(), "pod4/memory.max") {
		t.Errorf("an unreadable cgroup limit: error %v, want one naming the file", err)
	}
}
