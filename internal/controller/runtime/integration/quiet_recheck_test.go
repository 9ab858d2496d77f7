package integration_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// controlPlaneLog records the requests a manager sends to the control plane, below everything
// the manager wraps around its transport.
type controlPlaneLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *controlPlaneLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.requests = append(l.requests, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
		return next.RoundTrip(req)
	})
}

// count returns how many requests there were so far.
func (l *controlPlaneLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// since returns the requests after the first n.
func (l *controlPlaneLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests[n:])
}

// TestQuietRecheckReadsNoSecret runs a manager with the wiring of cmd/manager (manager.New)
// over the Runtimes of a namespace of its own, re-checking every two seconds, and provisions a
// runtime. Once it is Ready, its re-checks find nothing to change: over three of them the
// manager sends the control plane no write and no read of the kubeconfig Secret, which its
// watch holds (runtimectrl.KubeconfigSecrets).
func TestQuietRecheckReadsNoSecret(t *testing.T) {
	const ns = "quiet"
	ownNamespace(t, ns)

	o := managerOptions()
	o.Namespace = ns
	o.RuntimeRecheckInterval = 2 * time.Second
	// No rotation while the test runs: a rotation rewrites the Secret, which is drift.
	o.KubeconfigLifetime, o.KubeconfigRotateAfter = time.Hour, 0.5
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	o.Metrics = m
	var cp controlPlaneLog
	cpConfig := rest.CopyConfig(env.Config)
	cpConfig.Wrap(cp.wrap)
	// The manager must outlive the Runtime's cleanup, which needs it to delete the Runtime;
	// cleanups run last registered first.
	t.Cleanup(startOwnManager(t, cpConfig, rest.CopyConfig(sim.RESTConfig()), o))

	rt := newRuntimeWith(t, "quiet-1", func(rt *infrav1.Runtime) { rt.Namespace = ns })
	waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	secret := "/api/v1/namespaces/" + ns + "/secrets/" + gardenercluster.SecretName(rt.Labels[infrav1.LabelRuntimeID])

	// Let the passes that followed provisioning settle, then watch three re-checks.
	passes := func() int { return stepRuns(t, reg, runtimectrl.StepConfigureCluster) }
	waitForPasses(t, passes, 2)
	mark := cp.count()
	waitForPasses(t, passes, 3)
	requests := cp.since(mark)

	var secretReads, writes []string
	for _, r := range requests {
		method, path, _ := strings.Cut(r, " ")
		switch {
		case method != http.MethodGet:
			writes = append(writes, r)
		case path == secret:
			secretReads = append(secretReads, r)
		}
	}
	t.Logf("over three quiet re-checks the manager sent the control plane %d requests: %v", len(requests), requests)
	if len(secretReads) > 0 {
		t.Errorf("the re-checks read the kubeconfig Secret from the API server %d times, want none: the watch holds it", len(secretReads))
	}
	if len(writes) > 0 {
		t.Errorf("the re-checks found nothing to change but wrote %v", writes)
	}
}

// waitForPasses waits until passes has grown by n.
func waitForPasses(t *testing.T, passes func() int, n int) {
	t.Helper()
	from := passes()
	err := testenv.Eventually(t.Context(), 30*time.Second, 100*time.Millisecond, func(context.Context) (bool, error) {
		return passes() >= from+n, nil
	})
	if err != nil {
		t.Fatalf("%d passes of the Runtime controller did not come within 30s (%d came): %v", n, passes()-from, err)
	}
}

// stepRuns counts the runs of one step of the Runtime controller, from the step duration
// histogram of reg.
func stepRuns(t *testing.T, reg prometheus.Gatherer, step string) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if f.GetName() != metrics.Prefix+"_fsm_step_duration_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[fsm.LabelController] == runtimectrl.ControllerName && labels[fsm.LabelStep] == step {
				n += int(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return n
}
