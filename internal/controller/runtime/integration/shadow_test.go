package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// requestLog sees the requests that leave a manager's process on one connection, below
// everything the manager wraps around its transport, and sorts them without the manager's help:
// reads, dry runs, and writes.
type requestLog struct {
	mu      sync.Mutex
	dryRuns int
	writes  []string
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		switch {
		case req.Method == http.MethodGet || req.Method == http.MethodHead:
		case req.URL.Query().Get("dryRun") == metav1.DryRunAll || deleteAsksDryRun(req):
			l.dryRuns++
		default:
			l.writes = append(l.writes, req.Method+" "+req.URL.Path)
		}
		l.mu.Unlock()
		return next.RoundTrip(req)
	})
}

// deleteAsksDryRun reports whether req is a delete whose options, in its body, ask for a dry
// run; the body is put back.
func deleteAsksDryRun(req *http.Request) bool {
	if req.Method != http.MethodDelete || req.Body == nil {
		return false
	}
	data, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(data))
	opts := &metav1.DeleteOptions{}
	if err != nil {
		return false
	}
	// Protobuf for the built-in kinds, which the scheme decodes; JSON otherwise, under the
	// kind's group, which it may not know.
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, opts); err != nil && json.Unmarshal(data, opts) != nil {
		return false
	}
	return slices.Contains(opts.DryRun, metav1.DryRunAll)
}

func (l *requestLog) counts() (dryRuns int, writes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dryRuns, slices.Clone(l.writes)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// startRecording starts a manager of the Runtimes of ns with the options of these tests that
// records its writes: a shadow, or with shadowed false a manager that makes them. Its control
// plane and garden connections go through cp and garden. It returns the Recorder and a stop
// function, which the caller calls or leaves to a cleanup: a manager that serves Runtimes must
// outlive their own cleanup.
func startRecording(t *testing.T, ns string, shadowed bool, cp, garden *requestLog) (*shadow.Recorder, func()) {
	t.Helper()
	o := managerOptions()
	// A plan is what is due when it is made: with the 6 s rotation of these tests, an upstream
	// kubeconfig that falls due between the plan and the takeover is rotated without having
	// been planned. An hour's lifetime makes none due while the test runs.
	o.KubeconfigLifetime, o.KubeconfigRotateAfter = time.Hour, 0.5
	o.Namespace = ns
	o.Shadow, o.RecordWrites = shadowed, !shadowed
	// Its own metrics: the suite's manager serves its own on controller-runtime's registry.
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	o.Metrics, o.Recorder = m, shadow.NewRecorder(m.Shadow, !shadowed)
	cpConfig, gardenConfig := rest.CopyConfig(env.Config), rest.CopyConfig(sim.RESTConfig())
	cpConfig.Wrap(cp.wrap)
	gardenConfig.Wrap(garden.wrap)
	return o.Recorder, startOwnManager(t, cpConfig, gardenConfig, o)
}

// startOwnManager starts a manager wired by manager.New with o, beside the suite's, and returns
// a function that stops it and waits for its end; it may be called more than once.
func startOwnManager(t *testing.T, cpConfig, gardenConfig *rest.Config, o manager.Options) func() {
	t.Helper()
	mgr, err := manager.New(cpConfig, gardenConfig, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager of %s (shadow %v): %v", o.Namespace, o.Shadow, err)
		}
	}()
	return sync.OnceFunc(func() { cancel(); <-done })
}

// ownNamespace creates ns for a manager of its own, with the suite's ACL ConfigMap.
func ownNamespace(t *testing.T, ns string) {
	t.Helper()
	if err := env.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	acl := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: "kcp-system", Name: aclConfigMap}, acl); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: aclConfigMap}, Data: acl.Data}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// refusedRequests sums a shadow's refused requests over its targets.
func refusedRequests(t *testing.T, rec *shadow.Recorder) float64 {
	t.Helper()
	var sum float64
	for _, target := range []string{shadow.TargetControlPlane, shadow.TargetGarden, shadow.TargetRuntime} {
		sum += testutil.ToFloat64(rec.RefusedRequests(target))
	}
	return sum
}

// TestShadowBesideTheManagerWritesNothing runs a shadow beside the manager of these tests over
// a runtime's provisioning, an update and its deletion. Below the shadow's own guard, its
// control plane and garden connections carry reads and dry runs and not one write; the guard
// refused nothing, so every write the steps made went through its dry run; and the shadow did
// plan writes, so it ran the steps' decisions.
func TestShadowBesideTheManagerWritesNothing(t *testing.T) {
	var cp, gardenLog requestLog
	rec, stop := startRecording(t, "kcp-system", true, &cp, &gardenLog)
	t.Cleanup(stop)
	planned := map[string]bool{}
	sampled := make(chan struct{})
	sampling, stopSampling := context.WithCancel(t.Context())
	go func() {
		defer close(sampled)
		for sampling.Err() == nil {
			for _, r := range rec.Records().Records {
				if r.Name != "shadow-1" && r.Name != "rid-shadow-1" {
					continue
				}
				for _, w := range r.Writes {
					planned[fmt.Sprintf("%s: %s %s %s", r.Controller, w.Target, w.Verb, w.Object())] = true
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	rt := newRuntime(t, "shadow-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	rt.Spec.Shoot.Provider.Workers[0].Maximum = 21
	rt.Spec.Security.Administrators = append(rt.Spec.Security.Administrators, "shadow-admin@example.com")
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after the change", readyAt(rt.Generation))
	if err := env.Client.Delete(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	err := testenv.Eventually(t.Context(), 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
	})
	if err != nil {
		t.Fatalf("not deleted: %v", err)
	}
	stopSampling()
	<-sampled
	stop()

	cpDry, cpWrites := cp.counts()
	gardenDry, gardenWrites := gardenLog.counts()
	t.Logf("the shadow sent %d dry runs to the control plane and %d to the garden; it planned, over the lifecycle: %v",
		cpDry, gardenDry, slices.Sorted(maps.Keys(planned)))
	if writes := slices.Concat(cpWrites, gardenWrites); len(writes) > 0 {
		t.Errorf("the shadow wrote %d times: %v", len(writes), writes)
	}
	if n := refusedRequests(t, rec); n != 0 {
		t.Errorf("the shadow's guard refused %v requests: a step wrote without its dry run", n)
	}
	if cpDry+gardenDry == 0 || len(planned) == 0 {
		t.Errorf("the shadow planned no write over a whole lifecycle: it did not run the steps")
	}
}

// writeKey is a write as the proof compares it: the object reconciled, the target and object
// written, the verb, and the paths it changes (values differ in time stamps).
type writeKey struct {
	object, write, paths string
	failed               bool
}

func keyOf(r shadow.Record, w shadow.Write) writeKey {
	paths := make([]string, len(w.Changes))
	for i, c := range w.Changes {
		paths[i] = c.Path
	}
	return writeKey{
		object: r.Controller + " " + r.Namespace + "/" + r.Name,
		write:  w.Target + " " + w.Verb + " " + w.Object(),
		paths:  strings.Join(paths, " "),
		failed: w.Error != "" || w.Refused,
	}
}

// plannedWrites returns the writes of a shadow's records.
func plannedWrites(recs shadow.Records) map[writeKey]int {
	out := map[writeKey]int{}
	for _, r := range recs.Records {
		for _, w := range r.Writes {
			out[keyOf(r, w)]++
		}
	}
	return out
}

// firstPassWrites returns the writes of the first pass over each object of a live record. Where
// the plan of the object ends at a write the shadow could not make (a credential request) or
// judge (a dry run refused after a planned write to the same object), the pass is cut after the
// same write, which counts as that end.
func firstPassWrites(recs, plan shadow.Records) map[writeKey]int {
	ends := map[string]string{}
	for _, r := range plan.Records {
		if n := len(r.Writes); n > 0 && (r.Writes[n-1].Refused || r.Writes[n-1].Uncertain) {
			end := keyOf(r, r.Writes[n-1])
			ends[end.object] = end.write
		}
	}
	out := map[writeKey]int{}
	for _, r := range recs.Records {
		for _, w := range r.Writes {
			if w.Pass != 1 {
				break
			}
			k := keyOf(r, w)
			if end, ok := ends[k.object]; ok && k.write == end {
				k.failed = true
				out[k]++
				break
			}
			out[k]++
		}
	}
	return out
}

// steadyPlan waits until the shadow's records name every Runtime of all and have not changed
// for settle, and returns them.
func steadyPlan(t *testing.T, rec *shadow.Recorder, all []adopted, settle time.Duration) shadow.Records {
	t.Helper()
	var last shadow.Records
	var since time.Time
	err := testenv.Eventually(t.Context(), 3*time.Minute, 250*time.Millisecond, func(context.Context) (bool, error) {
		// Values move with the time a pass runs at (a condition's transition time); the
		// writes and their paths settle.
		now := rec.Records()
		if !maps.Equal(plannedWrites(now), plannedWrites(last)) {
			last, since = now, time.Now()
			return false, nil
		}
		named := map[string]bool{}
		for _, r := range now.Records {
			named[r.Name] = true
		}
		for _, a := range all {
			if !named[a.rt.Name] {
				return false, fmt.Errorf("no plan for %s", a.rt.Name)
			}
		}
		return time.Since(since) >= settle, nil
	})
	if err != nil {
		t.Fatalf("the shadow's plan did not settle: %v", err)
	}
	return last
}

// TestShadowPredictsTheTakeover lays the twenty runtimes of upstreamLandscape out as upstream
// leaves them, in a namespace of their own, and runs a shadow over them until its plan settles.
// Then a manager that records its writes takes them over. The shadow wrote nothing, and its
// planned writes equal, one for one, the writes of the takeover's first pass over each object it
// planned for.
func TestShadowPredictsTheTakeover(t *testing.T) {
	const ns = "migration"
	ownNamespace(t, ns)
	// The takeover's manager must outlive the Runtimes' cleanup, which needs it to delete them;
	// cleanups run last registered first.
	var stopLive func()
	t.Cleanup(func() {
		if stopLive != nil {
			stopLive()
		}
	})
	all := leaveUpstream(t, upstreamLandscape(), "mg", ns)
	var cp, gardenLog requestLog
	rec, stopShadow := startRecording(t, ns, true, &cp, &gardenLog)
	t.Cleanup(stopShadow)
	createUpstreamRuntimes(t, all)
	// Should the test end before the takeover, a manager still deletes the Runtimes: this
	// cleanup runs before theirs.
	t.Cleanup(func() {
		if stopLive == nil {
			_, stopLive = startRecording(t, ns, false, &requestLog{}, &requestLog{})
		}
	})
	plan := steadyPlan(t, rec, all, 5*time.Second)
	stopShadow()
	cpDry, cpWrites := cp.counts()
	gardenDry, gardenWrites := gardenLog.counts()
	if writes := slices.Concat(cpWrites, gardenWrites); len(writes) > 0 || refusedRequests(t, rec) != 0 {
		t.Errorf("the shadow wrote %v and its guard refused %v requests", writes, refusedRequests(t, rec))
	}

	planShootsAsThePlugin(t, all, plan)

	var liveCP, liveGarden requestLog
	live, stop := startRecording(t, ns, false, &liveCP, &liveGarden)
	stopLive = stop
	waitForTakeover(t, all)
	// Every object the shadow planned for has had its first pass in the takeover.
	err := testenv.Eventually(t.Context(), 30*time.Second, 200*time.Millisecond, func(context.Context) (bool, error) {
		passed := map[string]bool{}
		for _, r := range live.Records().Records {
			passed[r.Controller+" "+r.Namespace+"/"+r.Name] = true
		}
		for _, r := range plan.Records {
			if !passed[r.Controller+" "+r.Namespace+"/"+r.Name] {
				return false, fmt.Errorf("no pass over %s %s/%s yet", r.Controller, r.Namespace, r.Name)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("the takeover did not pass over every object planned for: %v", err)
	}
	planned, made := plannedWrites(plan), firstPassWrites(live.Records(), plan)
	// An object the takeover creates (the GardenerCluster of a runtime whose shoot was still
	// being created) has no state a shadow could plan a pass over: the plan holds its create,
	// and the passes over it follow from that.
	created := map[string]bool{}
	for _, r := range plan.Records {
		for _, w := range r.Writes {
			if w.Verb == shadow.VerbCreate && w.Kind == "GardenerCluster" {
				created["gardenercluster "+w.Namespace+"/"+w.Name] = true
			}
		}
	}
	followed := 0
	for k, n := range made {
		if created[k.object] {
			followed += n
			delete(made, k)
		}
	}
	matched := 0
	for k, n := range planned {
		matched += min(n, made[k])
	}
	var onlyPlanned, onlyMade []string
	for k, n := range planned {
		if d := n - made[k]; d > 0 {
			onlyPlanned = append(onlyPlanned, fmt.Sprintf("%dx %+v", d, k))
		}
	}
	for k, n := range made {
		if d := n - planned[k]; d > 0 {
			onlyMade = append(onlyMade, fmt.Sprintf("%dx %+v", d, k))
		}
	}
	slices.Sort(onlyPlanned)
	slices.Sort(onlyMade)
	t.Logf("the shadow sent %d dry runs to the control plane and %d to the garden, and planned %d writes over %d objects; "+
		"the takeover's first passes over the same objects made %d, %d of them as planned; %d more were the first passes over the %d GardenerClusters it created as planned",
		cpDry, gardenDry, sum(planned), len(plan.Records), sum(made), matched, followed, len(created))
	if len(onlyPlanned) > 0 || len(onlyMade) > 0 {
		t.Errorf("the plan and the takeover differ:\nplanned, not made:\n  %s\nmade, not planned:\n  %s",
			strings.Join(onlyPlanned, "\n  "), strings.Join(onlyMade, "\n  "))
	}
}

// planShootsAsThePlugin decides each Runtime's shoot write as `kubectl runtime plan` does
// (runtimectrl.PlanShoot, on the Runtime and its shoot as they are) and checks that the shadow's
// plan has the same write of the shoot: a create, a take-over (a merge patch of the same paths),
// an apply, or none. Runtimes being deleted are left out: the plugin plans no deletion.
func planShootsAsThePlugin(t *testing.T, all []adopted, plan shadow.Records) {
	t.Helper()
	verbs := map[runtimectrl.ShootWrite]string{runtimectrl.ShootWriteCreate: shadow.VerbCreate,
		runtimectrl.ShootWriteTakeOver: shadow.VerbPatch, runtimectrl.ShootWriteApply: shadow.VerbApply}
	byWrite := map[runtimectrl.ShootWrite]int{}
	for _, a := range all {
		if a.c.deleted {
			continue
		}
		rt := &infrav1.Runtime{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(a.rt), rt); err != nil {
			t.Fatal(err)
		}
		var current *gardencorev1beta1.Shoot
		shoot := &gardencorev1beta1.Shoot{}
		err := garden.Get(t.Context(), client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}, shoot)
		switch {
		case err == nil:
			current = shoot
		case !apierrors.IsNotFound(err):
			t.Fatal(err)
		}
		p, err := runtimectrl.PlanShoot(rt, current, renderOptions(t, rt))
		if err != nil {
			t.Fatalf("%s: %v", rt.Name, err)
		}
		byWrite[p.Write]++
		var want []string
		if p.Write == runtimectrl.ShootWriteTakeOver {
			for _, c := range p.Changes {
				want = append(want, c.Path)
			}
		}
		verb, paths := shadowShootWrite(plan, rt)
		if verb != verbs[p.Write] || (p.Write == runtimectrl.ShootWriteTakeOver && !slices.Equal(paths, want)) {
			t.Errorf("%s: the plugin's plan is %s %v, the shadow's %q %v", rt.Name, p.Write, want, verb, paths)
		}
	}
	t.Logf("the plugin's plan of the shoots before the takeover, as the shadow's: %v", byWrite)
}

// shadowShootWrite returns the verb and paths of the first write of rt's shoot in the shadow's
// plan of rt; "" when there is none.
func shadowShootWrite(plan shadow.Records, rt *infrav1.Runtime) (string, []string) {
	for _, r := range plan.Records {
		if r.Controller != runtimectrl.ControllerName || r.Namespace != rt.Namespace || r.Name != rt.Name {
			continue
		}
		for _, w := range r.Writes {
			if w.Target == shadow.TargetGarden && w.Kind == "Shoot" && w.Subresource == "" && w.Name == rt.Spec.Shoot.Name {
				paths := make([]string, len(w.Changes))
				for i, c := range w.Changes {
					paths[i] = c.Path
				}
				return w.Verb, paths
			}
		}
	}
	return "", nil
}

func sum(m map[writeKey]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
