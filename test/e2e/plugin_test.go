package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// The kubectl plugin as a person runs it: built from cmd/kubectl-runtime once per test binary,
// with a kubeconfig of the suite's API server whose context has no namespace of its own.
var (
	pluginOnce       sync.Once
	pluginBin        string
	pluginKubeconfig string
	pluginErr        error
)

// kubectlRuntime runs `kubectl runtime ARGS` against the suite's API server and returns what it
// printed; a failure to build or run the plugin fails the test.
func kubectlRuntime(t *testing.T, args ...string) string {
	t.Helper()
	pluginOnce.Do(func() { pluginErr = buildPlugin() })
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, pluginBin, append([]string{"--kubeconfig", pluginKubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl runtime %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// buildPlugin builds the plugin into the suite's directory and writes its kubeconfig there.
func buildPlugin() error {
	pluginBin = filepath.Join(sys.dir, "kubectl-runtime")
	build := exec.Command("go", "build", "-o", pluginBin, "./cmd/kubectl-runtime")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the kubectl plugin: %w\n%s", err, out)
	}
	pluginKubeconfig = filepath.Join(sys.dir, "plugin.kubeconfig")
	if err := localenv.WriteKubeconfig(pluginKubeconfig, "e2e", metav1.NamespaceDefault, sys.env.Config); err != nil {
		return fmt.Errorf("kubeconfig for the kubectl plugin: %w", err)
	}
	return nil
}

// pluginWhilePaged runs the plugin on the walkthrough's Failed Runtime while its page is out:
// status, with the suite's real Prometheus, must list the firing RuntimeRetriesExhausted, and
// explain must name it and the way out. Both outputs join the captures.
func (w *walkthrough) pluginWhilePaged(t *testing.T) {
	t.Helper()
	status := kubectlRuntime(t, "status", conceptsRuntime, "-n", namespace, "--prometheus", sys.promURL)
	if got := field(status, "State"); got != "Failed" {
		t.Errorf("kubectl runtime status: State %q, want Failed:\n%s", got, status)
	}
	if got := field(status, "Reason"); got != w.reason {
		t.Errorf("kubectl runtime status: retry reason %q, want %s:\n%s", got, w.reason, status)
	}
	firing := false
	for line := range strings.Lines(status) {
		f := strings.Fields(line)
		firing = firing || (len(f) > 2 && f[0] == alertExhausted && f[1] == "firing" && f[2] == "critical")
	}
	if !firing {
		t.Errorf("kubectl runtime status --prometheus lists no firing %s:\n%s", alertExhausted, status)
	}
	explain := kubectlRuntime(t, "explain", conceptsRuntime, "-n", namespace)
	for _, want := range []string{
		"is Failed: its retries are exhausted.",
		"The alert " + alertExhausted,
		"kubectl runtime retry " + conceptsRuntime + " -n " + namespace,
	} {
		if !strings.Contains(explain, want) {
			t.Errorf("kubectl runtime explain says no %q:\n%s", want, explain)
		}
	}
	list := kubectlRuntime(t, "list", "-n", namespace, "--failing")
	if !strings.Contains(list, conceptsRuntime) {
		t.Errorf("kubectl runtime list --failing does not list %s:\n%s", conceptsRuntime, list)
	}
	if *conceptsOut != "" {
		w.writeFile(t, filepath.Join("04-paged", "kubectl-runtime-status.txt"), []byte(status))
		w.writeFile(t, filepath.Join("04-paged", "kubectl-runtime-explain.txt"), []byte(explain))
	}
}

// field returns the value of the first line of a kubectl-describe style output that starts with
// NAME and a colon, with the padding trimmed.
func field(out, name string) string {
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
