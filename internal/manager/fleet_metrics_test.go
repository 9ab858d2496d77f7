package manager

import (
	"context"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// TestUpstreamMetricLabels checks that upstream's three per-object metrics carry exactly
// upstream's label names (internal/controller/metrics of upstream's manager), so dashboards and
// alerts written for upstream select the same series.
func TestUpstreamMetricLabels(t *testing.T) {
	s := scheme(t)
	rt := &infrav1.Runtime{}
	rt.Name, rt.Namespace = "rt-1", "kcp-system"
	rt.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1"}
	rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type = "c-1", "aws"
	rt.Status.State = infrav1.StateReady
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = "rid-1", "kcp-system"
	gc.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1"}
	gc.Spec.Shoot.Name = "c-1"
	gc.Status.KubeconfigExpiresAt = &metav1.Time{Time: time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)}
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(rt, gc).Build()

	reg := collecting(t, reader)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"infrastructure_manager_im_runtime_state":           {"message", "provider", "runtimeId", "runtimeName", "shoot", "state"},
		"infrastructure_manager_im_gardener_clusters_state": {"reason", "runtimeId", "shoot", "state"},
		"infrastructure_manager_im_kubeconfig_expiration":   {"expirationDuration", "expires", "rotationDuration", "runtimeId", "shoot"},
	}
	got := map[string][]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
				if l.GetName() == "shoot" && l.GetValue() != "c-1" {
					t.Errorf("%s: shoot=%q, want c-1", f.GetName(), l.GetValue())
				}
			}
			slices.Sort(names)
			got[f.GetName()] = names
		}
	}
	for name, labels := range want {
		if !slices.Equal(got[name], labels) {
			t.Errorf("%s labels %v, want upstream's %v", name, got[name], labels)
		}
	}
}

// copyRecorder is a reader that records whether each list asked for the cached objects without
// copies.
type copyRecorder struct {
	client.Reader
	lists, uncopied int
}

func (r *copyRecorder) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	r.lists++
	if ptr.Deref(o.UnsafeDisableDeepCopy, false) {
		r.uncopied++
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestUpstreamMetricsReadWithoutCopies: a scrape reads the fleet's Runtimes and GardenerClusters
// from the cache as they are. A copy of each at every scrape was tens of megabytes of garbage at
// 5,000 runtimes, and the heap grew to hold it.
func TestUpstreamMetricsReadWithoutCopies(t *testing.T) {
	s := scheme(t)
	reader := &copyRecorder{Reader: fake.NewClientBuilder().WithScheme(s).Build()}
	reg := collecting(t, reader)
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
	if reader.lists != 2 || reader.uncopied != 2 {
		t.Errorf("a scrape made %d lists, %d of them without copies; want 2 and 2", reader.lists, reader.uncopied)
	}
}

// TestKubeconfigExpirationFollowsTheStatus: the expiry series of a GardenerCluster is its
// status.kubeconfigExpiresAt, read at the scrape; one without a stored kubeconfig has none, and
// the series goes with its GardenerCluster.
func TestKubeconfigExpirationFollowsTheStatus(t *testing.T) {
	s := scheme(t)
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
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(stored, waiting).Build()

	reg := collecting(t, c)
	name := metrics.Prefix + "_kubeconfig_expiration_timestamp_seconds"
	head := "# HELP " + name + " When the stored admin kubeconfig of a runtime expires (unix seconds).\n" +
		"# TYPE " + name + " gauge\n"
	want := head + name + `{runtime_id="rid-1",shoot="c-1"} ` + strconv.FormatInt(expires.Unix(), 10) + "\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), name); err != nil {
		t.Error(err)
	}
	if err := c.Delete(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
		t.Errorf("after the GardenerCluster went: %d series of %s (err %v), want none", n, name, err)
	}
}

// BenchmarkFleetMetricsScrape is one scrape of /metrics at 5,000 runtimes, compressed as a
// Prometheus asks for it: what it allocates is garbage the collector must take back, and most of
// it is alive at once, since the registry gathers every series before it writes any. The
// reader hands out the objects as the cache does without copies: each list is a new slice of
// shallow copies.
func BenchmarkFleetMetricsScrape(b *testing.B) {
	const n = 5000
	expires := metav1.NewTime(time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC))
	fleet := &shallowLists{}
	for i := range n {
		id := "rid-" + strconv.Itoa(i)
		rt := infrav1.Runtime{}
		rt.Name, rt.Namespace = id, "kcp-system"
		rt.Labels = map[string]string{infrav1.LabelRuntimeID: id}
		rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type = "c-"+strconv.Itoa(i), "aws"
		rt.Status.State = infrav1.StateReady
		rt.Status.Conditions = []metav1.Condition{{Type: infrav1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Done", Message: "All steps succeeded"}}
		gc := infrav1.GardenerCluster{}
		gc.Name, gc.Namespace = id, "kcp-system"
		gc.Labels = rt.Labels
		gc.Spec.Shoot.Name = rt.Spec.Shoot.Name
		gc.Status.State = infrav1.StateReady
		gc.Status.Conditions = rt.Status.Conditions
		gc.Status.KubeconfigExpiresAt = &expires
		fleet.runtimes, fleet.clusters = append(fleet.runtimes, rt), append(fleet.clusters, gc)
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

// shallowLists lists the Runtimes and GardenerClusters it holds as the cache does when asked
// for no copies.
type shallowLists struct {
	client.Reader
	runtimes []infrav1.Runtime
	clusters []infrav1.GardenerCluster
}

func (s *shallowLists) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *infrav1.RuntimeList:
		l.Items = slices.Clone(s.runtimes)
	case *infrav1.GardenerClusterList:
		l.Items = slices.Clone(s.clusters)
	}
	return nil
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
// series read through reader.
func collecting(t testing.TB, reader client.Reader) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	declared, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := declared.Register(newFleetMetrics(reader, declared, 24*time.Hour, 0.6)); err != nil {
		t.Fatal(err)
	}
	return reg
}
