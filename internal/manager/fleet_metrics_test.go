package manager

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// TestUpstreamMetricLabels checks that upstream's three per-object metrics carry exactly
// upstream's label names (internal/controller/metrics of upstream's manager), so dashboards and
// alerts written for upstream select the same series, with the values of the objects.
func TestUpstreamMetricLabels(t *testing.T) {
	rt := &infrav1.Runtime{}
	rt.Name, rt.Namespace = "rt-1", "kcp-system"
	rt.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1"}
	rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type = "c-1", "aws"
	rt.Status.State = infrav1.StateReady
	rt.Status.Conditions = []metav1.Condition{{Type: infrav1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Done", Message: "All steps succeeded"}}
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = "rid-1", "kcp-system"
	gc.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1"}
	gc.Spec.Shoot.Name = "c-1"
	gc.Status.State = infrav1.StateReady
	gc.Status.Conditions = []metav1.Condition{{Type: "KubeconfigReady", Status: metav1.ConditionTrue, Reason: "SecretCreated"}}
	gc.Status.KubeconfigExpiresAt = &metav1.Time{Time: time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, fleet := fleetOf(t, rt, gc)

	reg := collecting(t, fleet)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	expires := strconv.FormatInt(gc.Status.KubeconfigExpiresAt.Unix(), 10)
	want := map[string]map[string]string{
		"infrastructure_manager_im_runtime_state": {"message": "All steps succeeded", "provider": "aws",
			"runtimeId": "rid-1", "runtimeName": "rt-1", "shoot": "c-1", "state": "Ready"},
		"infrastructure_manager_im_gardener_clusters_state": {"reason": "SecretCreated", "runtimeId": "rid-1", "shoot": "c-1", "state": "Ready"},
		"infrastructure_manager_im_kubeconfig_expiration": {"expirationDuration": "86400", "expires": expires,
			"rotationDuration": "51840", "runtimeId": "rid-1", "shoot": "c-1"},
	}
	got := map[string]map[string]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[f.GetName()] = labels
		}
	}
	for name, labels := range want {
		if !maps.Equal(got[name], labels) {
			t.Errorf("%s labels %v, want upstream's names with %v", name, got[name], labels)
		}
	}
}

// TestFleetSeriesShareRepeatedPairs: the series of a large fleet share the label pairs whose
// values repeat (a state, a provider), and the series of one GardenerCluster share the pairs of
// its runtime and shoot. Each series keeps its own values, sorted by name as the text of a
// scrape wants them.
func TestFleetSeriesShareRepeatedPairs(t *testing.T) {
	var objs []client.Object
	expires := metav1.NewTime(time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := range 3 {
		rt := &infrav1.Runtime{}
		rt.Name, rt.Namespace = "rt-"+strconv.Itoa(i), "kcp-system"
		rt.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-" + strconv.Itoa(i)}
		rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type = "c-"+strconv.Itoa(i), "aws"
		// Not the same state as the runtime before: the pair is the whole fleet's.
		rt.Status.State = []infrav1.State{infrav1.StateReady, infrav1.StateFailed}[i%2]
		gc := &infrav1.GardenerCluster{}
		gc.Name, gc.Namespace = rt.Labels[infrav1.LabelRuntimeID], "kcp-system"
		gc.Labels = rt.Labels
		gc.Spec.Shoot.Name = rt.Spec.Shoot.Name
		gc.Status.KubeconfigExpiresAt = &expires
		objs = append(objs, rt, gc)
	}
	_, fleet := fleetOf(t, objs...)
	families, err := collecting(t, fleet).Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]*dto.Metric{}
	for _, f := range families {
		byName[f.GetName()] = f.GetMetric()
	}
	series := byName["infrastructure_manager_im_runtime_state"]
	if len(series) != 3 {
		t.Fatalf("%d series of im_runtime_state, want 3", len(series))
	}
	pair := func(m *dto.Metric, name string) *dto.LabelPair {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l
			}
		}
		t.Fatalf("series %v has no label %s", m, name)
		return nil
	}
	for i, m := range series {
		if !slices.IsSortedFunc(m.GetLabel(), func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) }) {
			t.Errorf("series %v: labels not sorted by name", m)
		}
		if got, want := pair(m, "runtimeName").GetValue(), "rt-"+strconv.Itoa(i); got != want {
			t.Errorf("series %d: runtimeName %q, want %q", i, got, want)
		}
		for _, shared := range []string{"provider", "message"} {
			if pair(m, shared) != pair(series[0], shared) {
				t.Errorf("series %d: its %s pair is a copy of the first series', want the same pair", i, shared)
			}
		}
	}
	if pair(series[2], "state") != pair(series[0], "state") || pair(series[1], "state") == pair(series[0], "state") {
		t.Errorf("state pairs %v, %v and %v: want the first and the last (Ready) the same pair, the second (Failed) its own",
			pair(series[0], "state"), pair(series[1], "state"), pair(series[2], "state"))
	}
	states, expiries := byName["infrastructure_manager_im_gardener_clusters_state"], byName["infrastructure_manager_im_kubeconfig_expiration"]
	if len(states) != 3 || len(expiries) != 3 {
		t.Fatalf("%d and %d series of the GardenerClusters' state and expiry, want 3 of each", len(states), len(expiries))
	}
	for i := range states {
		for _, name := range []string{"runtimeId", "shoot"} {
			if state, expiry := pair(states[i], name), pair(expiries[i], name); state != expiry {
				t.Errorf("GardenerCluster %d: its state and expiry series have two %s pairs (%s, %s), want one", i, name, state, expiry)
			}
		}
		if i > 0 && pair(states[i], "shoot") == pair(states[0], "shoot") {
			t.Errorf("GardenerCluster %d shares the shoot pair of another", i)
		}
	}
}

// TestKubeconfigExpirationFollowsTheStatus: the expiry series of a GardenerCluster is its
// status.kubeconfigExpiresAt, read at the scrape; one without a stored kubeconfig has none, and
// the series goes with its GardenerCluster.
func TestKubeconfigExpirationFollowsTheStatus(t *testing.T) {
	expires := time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)
	stored := &infrav1.GardenerCluster{}
	stored.Name, stored.Namespace = "rid-1", "kcp-system"
	stored.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1"}
	stored.Spec.Shoot.Name = "c-1"
	stored.Status.KubeconfigExpiresAt = &metav1.Time{Time: expires}
	waiting := &infrav1.GardenerCluster{}
	waiting.Name, waiting.Namespace = "rid-2", "kcp-system"
	waiting.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-2"}
	waiting.Spec.Shoot.Name = "c-2"
	informers, fleet := fleetOf(t, stored, waiting)

	reg := collecting(t, fleet)
	name := metrics.Prefix + "_kubeconfig_expiration_timestamp_seconds"
	head := "# HELP " + name + " When the stored admin kubeconfig of a runtime expires (unix seconds).\n" +
		"# TYPE " + name + " gauge\n"
	want := head + name + `{runtime_id="rid-1",shoot="c-1"} ` + strconv.FormatInt(expires.Unix(), 10) + "\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), name); err != nil {
		t.Error(err)
	}
	informer, err := informers.FakeInformerFor(context.Background(), stored)
	if err != nil {
		t.Fatal(err)
	}
	informer.Delete(stored)
	if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
		t.Errorf("after the GardenerCluster went: %d series of %s (err %v), want none", n, name, err)
	}
}

// TestCachedObjectsAreTheInformers: a scrape reads the objects the informer holds, not copies:
// a copy of each at every scrape was megabytes of garbage at 5,000 runtimes. An update replaces
// the object, a delete (also one the informer learnt of late) removes it, and before the
// informer has handed over its first list there is no fleet to read.
func TestCachedObjectsAreTheInformers(t *testing.T) {
	ctx := context.Background()
	rt := &infrav1.Runtime{}
	rt.Name, rt.Namespace = "rt-1", "kcp-system"
	informers, fleet := fleetOf(t)
	informer, err := informers.FakeInformerFor(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	stored := cached(t, rt)
	informer.Add(stored)
	if got, ok := fleet.Runtimes(); !ok || len(got) != 1 || client.Object(got[0]) != stored {
		t.Fatalf("runtimes %v (synced %v), want the informer's own object", got, ok)
	}
	updated := rt.DeepCopy()
	updated.Status.State = infrav1.StateFailed
	storedUpdate := cached(t, updated)
	informer.Update(stored, storedUpdate)
	if got, _ := fleet.Runtimes(); len(got) != 1 || client.Object(got[0]) != storedUpdate {
		t.Fatalf("after an update: %v, want the updated object alone", got)
	}
	fleet.runtimes.remove(toolscache.DeletedFinalStateUnknown{Key: "kcp-system/rt-1", Obj: storedUpdate})
	if got, _ := fleet.Runtimes(); len(got) != 0 {
		t.Errorf("after a delete learnt late: %v, want none", got)
	}

	unsynced := &informertest.FakeInformers{Scheme: scheme(t), InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{
		infrav1.GroupVersion.WithKind("Runtime"): controllertest.NewFakeInformer(),
	}}
	waiting, err := watchFleet(ctx, unsynced)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := waiting.Runtimes(); ok {
		t.Errorf("an informer that has not synced gave %v, want no fleet yet", got)
	}
	if _, ok := waiting.Clusters(); !ok {
		t.Error("the synced informer of GardenerClusters gave no fleet")
	}
}

// BenchmarkFleetMetricsScrape is one scrape of /metrics at 5,000 runtimes, compressed as a
// Prometheus asks for it: what it allocates is garbage the collector must take back, and most of
// it is alive at once, since the registry gathers every series before it writes any.
func BenchmarkFleetMetricsScrape(b *testing.B) {
	const n = 5000
	expires := metav1.NewTime(time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC))
	fleet := &fixedFleet{}
	for i := range n {
		id := "rid-" + strconv.Itoa(i)
		rt := &infrav1.Runtime{}
		rt.Name, rt.Namespace = id, "kcp-system"
		rt.Labels = map[string]string{infrav1.LabelRuntimeID: id}
		rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type = "c-"+strconv.Itoa(i), "aws"
		rt.Status.State = infrav1.StateReady
		rt.Status.Conditions = []metav1.Condition{{Type: infrav1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Done", Message: "All steps succeeded"}}
		gc := &infrav1.GardenerCluster{}
		gc.Name, gc.Namespace = id, "kcp-system"
		gc.Labels = rt.Labels
		gc.Spec.Shoot.Name = rt.Spec.Shoot.Name
		gc.Status.State = infrav1.StateReady
		gc.Status.Conditions = rt.Status.Conditions
		gc.Status.KubeconfigExpiresAt = &expires
		fleet.runtimes, fleet.clusters = append(fleet.runtimes, runtimectrl.StoreRuntime(rt)), append(fleet.clusters, storeCluster(gc))
	}
	handler := promhttp.HandlerFor(collecting(b, fleet), promhttp.HandlerOpts{})
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("scrape: %d %s", rec.Code, rec.Body)
		}
	}
	// Four series per runtime: its state, its GardenerCluster's state and the kubeconfig's
	// expiry under both names.
	b.ReportMetric(4*n, "fleet-series/op")
}

// fixedFleet is a fleet that does not change, handed out as the cache's would be: a new slice
// of the same objects at each scrape.
type fixedFleet struct {
	runtimes []*runtimectrl.StoredRuntime
	clusters []*storedCluster
}

func (f *fixedFleet) Runtimes() ([]*runtimectrl.StoredRuntime, bool) {
	return slices.Clone(f.runtimes), true
}

func (f *fixedFleet) Clusters() ([]*storedCluster, bool) {
	return slices.Clone(f.clusters), true
}

// fleetOf returns synced fake informers that hold objs as the manager's cache holds them (after
// its transform, in their stored forms), and the fleet that follows them.
func fleetOf(t *testing.T, objs ...client.Object) (*informertest.FakeInformers, cachedFleet) {
	t.Helper()
	ctx := context.Background()
	informers := &informertest.FakeInformers{Scheme: scheme(t)}
	fleet, err := watchFleet(ctx, informers)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		informer, err := informers.FakeInformerFor(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		informer.Add(cached(t, obj))
	}
	return informers, fleet
}

// cached is obj as the manager's cache holds it, after its transform: a Runtime or
// GardenerCluster in its stored form.
func cached(t *testing.T, obj client.Object) client.Object {
	t.Helper()
	out, err := ControlPlaneTransform(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out.(client.Object)
}

// scheme knows the manager's kinds.
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// collecting returns a registry with the metrics of the contract and the collector of the
// series of fleet.
func collecting(t testing.TB, fleet fleetSource) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	declared, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := declared.Register(newFleetMetrics(fleet, declared, 24*time.Hour, 0.6)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestCopiedGardenerClusterLeavesTheScrapeWhole: a GardenerCluster copied under another name,
// with the runtime-id label and shoot of the one it copies, is none the manager serves (its
// name is not its runtime id). It adds no series: its series would repeat the original's label
// values while neither has a status yet, and one repeated series fails the whole scrape.
func TestCopiedGardenerClusterLeavesTheScrapeWhole(t *testing.T) {
	original := &infrav1.GardenerCluster{}
	original.Name, original.Namespace = "rid-1", "kcp-system"
	original.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1"}
	original.Spec.Shoot.Name = "c-1"
	copied := original.DeepCopy()
	copied.Name = "rid-1-copy"
	_, fleet := fleetOf(t, original, copied)

	reg := collecting(t, fleet)
	name := "infrastructure_manager_im_gardener_clusters_state"
	if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 1 {
		t.Errorf("%d series of %s (err %v), want the original's alone", n, name, err)
	}
}
