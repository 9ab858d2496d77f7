package controlplane_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// signalHelperEnv makes the test binary run signalHelper instead of the tests.
const signalHelperEnv = "CONTROLPLANE_SIGNAL_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(signalHelperEnv) != "" {
		signalHelper()
		return
	}
	os.Exit(m.Run())
}

// signalHelper starts a control plane under StopOnSignal, says so on stdout and waits for the
// signal that TestStopOnSignal sends.
func signalHelper() {
	controlplane.StopOnSignal()
	if _, err := controlplane.Start(context.Background(), controlplane.Options{Assets: os.Getenv(signalHelperEnv)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("started")
	select {}
}

// TestStopOnSignal ends a process that runs a control plane with SIGTERM, and checks that etcd
// and kube-apiserver, which run in process groups of their own, went with it.
func TestStopOnSignal(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(testenv.RepoRoot(), "bin", "k8s")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), signalHelperEnv+"="+assets)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("helper: read %q, %v; want started", line, err)
	}
	children := childrenOf(t, cmd.Process.Pid)
	if len(children) != 2 {
		t.Fatalf("helper runs processes %v, want etcd and kube-apiserver", children)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("helper ended with %v, want exit code %d", err, 128+int(syscall.SIGTERM))
	}
	for pid, name := range children {
		if alive(pid) {
			t.Errorf("%s (pid %d) still runs after its starter ended", name, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// childrenOf returns the pids and names of the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) map[int]string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after its closing parenthesis.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		child, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		out[child] = s[open+1 : end]
	}
	return out
}

// alive reports whether pid names a process that has not ended (a zombie has ended).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}
