package shadow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// newRecorder returns a Recorder whose metrics are registered with reg.
func newRecorder(t *testing.T, reg prometheus.Registerer, live bool) *Recorder {
	t.Helper()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return NewRecorder(m.Shadow, live)
}

// TestGuardSendsOnlyWhatChangesNothing sends every kind of request through a shadow's guard to
// a server that counts what reaches it.
func TestGuardSendsOnlyWhatChangesNothing(t *testing.T) {
	var arrived atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		arrived.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	rec := newRecorder(t, prometheus.NewRegistry(), false)
	rt := rec.Guard(TargetGarden)(http.DefaultTransport)
	cases := []struct {
		method, path string
		sent         bool
		why          string
		body         string
	}{
		{"DELETE", "/api/v1/namespaces/x/secrets/y", true, "a delete's dry run is in its options, in the body", `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`},
		{"DELETE", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-x/shoots/s", true, "options under the kind's group", `{"kind":"DeleteOptions","apiVersion":"core.gardener.cloud/v1beta1","dryRun":["All"]}`},
		{"DELETE", "/api/v1/namespaces/x/secrets/y", false, "a delete whose options ask for no dry run", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`},
		{"DELETE", "/api/v1/namespaces/x/secrets/y", true, "a built-in kind's delete has its options in protobuf", protobufDeleteOptions(t, []string{metav1.DryRunAll})},
		{"DELETE", "/api/v1/namespaces/x/secrets/y", false, "protobuf options without a dry run", protobufDeleteOptions(t, nil)},
		{"DELETE", "/api/v1/namespaces/x/secrets/y", false, "a delete whose body is no DeleteOptions", `not json`},
		{"DELETE", "/api/v1/namespaces/x/secrets/y", false, "options too large to read whole are not sent cut short",
			`{"dryRun":["All"],"propagationPolicy":"` + strings.Repeat("x", maxDeleteBody) + `"}`},
		{"GET", "/api/v1/namespaces/x/configmaps/y", true, "a read", ""},
		{"GET", "/api/v1/configmaps?watch=true", true, "a watch is a read", ""},
		{"HEAD", "/healthz", true, "a read", ""},
		{"POST", "/api/v1/namespaces/x/configmaps?dryRun=All", true, "a dry run persists nothing", ""},
		{"PATCH", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-x/shoots/s?dryRun=All&fieldManager=m", true, "a dry run persists nothing", ""},
		{"POST", "/apis/authentication.k8s.io/v1/tokenreviews", true, "a review asks, it does not write", ""},
		{"POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", true, "a review asks, it does not write", ""},
		{"POST", "/api/v1/namespaces/x/configmaps", false, "a create", ""},
		{"PUT", "/api/v1/namespaces/x/configmaps/y", false, "an update", ""},
		{"PATCH", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-x/shoots/s", false, "a patch", ""},
		{"DELETE", "/api/v1/namespaces/x/secrets/y", false, "a delete", ""},
		{"POST", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-x/shoots/s/adminkubeconfig", false, "a credential request", ""},
		{"POST", "/api/v1/namespaces/x/configmaps?dryRun=None", false, "not a dry run", ""},
		{"POST", "/apis/coordination.k8s.io/v1/namespaces/x/leases", false, "a lease is a write", ""},
	}
	refused := 0
	for _, c := range cases {
		before := arrived.Load()
		req, err := http.NewRequestWithContext(t.Context(), c.method, srv.URL+c.path, strings.NewReader(cmp.Or(c.body, "{}")))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		sent := arrived.Load() > before
		if sent != c.sent {
			t.Errorf("%s %s (%s): sent %v, want %v", c.method, c.path, c.why, sent, c.sent)
		}
		var re *RefusedError
		if !c.sent {
			refused++
			if !errors.As(err, &re) || re.Target != TargetGarden {
				t.Errorf("%s %s: error %v, want a RefusedError of the garden", c.method, c.path, err)
			}
		} else if err != nil {
			t.Errorf("%s %s: %v", c.method, c.path, err)
		}
	}
	if got := testutil.ToFloat64(rec.refused.WithLabelValues(TargetGarden)); got != float64(refused) {
		t.Errorf("refused requests counted %v, want %d", got, refused)
	}
}

func TestChanges(t *testing.T) {
	cases := []struct {
		name          string
		before, after string
		want          []Change
	}{
		{"equal objects change nothing", `{"a":1,"b":{"c":[1,2]}}`, `{"b":{"c":[1,2]},"a":1}`, nil},
		{"a value changed, added and removed, keys in order",
			`{"a":1,"b":{"c":"x","d":true}}`, `{"a":2,"b":{"c":"x","e":"new"}}`,
			[]Change{{Path: ".a", Old: 1.0, New: 2.0}, {Path: ".b.d", Old: true}, {Path: ".b.e", New: "new"}}},
		{"a list of the same length changes element by element", `{"l":[{"n":"a"},{"n":"b"}]}`, `{"l":[{"n":"a"},{"n":"c"}]}`,
			[]Change{{Path: ".l[1].n", Old: "b", New: "c"}}},
		{"a list of another length changes as a whole", `{"l":[1]}`, `{"l":[1,2]}`,
			[]Change{{Path: ".l", Old: []any{1.0}, New: []any{1.0, 2.0}}}},
		{"a Secret's values are redacted, and a change still shows", `{"type":"Opaque","data":{"config":"b2xk","same":"eA=="}}`, `{"type":"Opaque","data":{"config":"bmV3","same":"eA=="}}`,
			[]Change{{Path: ".data.config", Old: "(redacted, sha256 0c2c6b90f009)", New: "(redacted, sha256 fd9bd588247a)"}}},
		{"the fields every write moves are no change",
			`{"metadata":{"name":"n","resourceVersion":"1","generation":1,"managedFields":[{"manager":"a"}]}}`,
			`{"metadata":{"name":"n","resourceVersion":"2","generation":2,"managedFields":[{"manager":"b"}]}}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b, a map[string]any
			if err := json.Unmarshal([]byte(c.before), &b); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.after), &a); err != nil {
				t.Fatal(err)
			}
			bm, err := asMap(b)
			if err != nil {
				t.Fatal(err)
			}
			am, err := asMap(a)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(c.want, changes(bm, am)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// pass runs one reconcile of rt through the recorder with step as the reconciler's work.
func runPass(t *testing.T, rec *Recorder, name string, step func(context.Context) error) {
	t.Helper()
	r := rec.Reconciler("runtime", reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, step(ctx)
	}))
	if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: name}, Data: data}
}

// TestShadowClientWritesNothingAndRecordsEveryChange writes through a shadow's client to a fake
// API server: every write reaches it as a dry run, nothing changes there, and the record of the
// pass has each write with the values it would change.
func TestShadowClientWritesNothingAndRecordsEveryChange(t *testing.T) {
	existing := configMap("kept", map[string]string{"a": "1", "b": "2"})
	gone := configMap("gone", nil)
	api := fake.NewClientBuilder().WithObjects(existing.DeepCopy(), gone.DeepCopy()).Build()
	reg := prometheus.NewRegistry()
	rec := newRecorder(t, reg, false)
	c := rec.Client(api, api, TargetControlPlane)
	runPass(t, rec, "rt-1", func(ctx context.Context) error {
		if err := c.Create(ctx, configMap("new", map[string]string{"x": "y"})); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(existing), cm); err != nil {
			return err
		}
		cm.Data = map[string]string{"a": "1", "b": "3", "c": "4"}
		if err := c.Update(ctx, cm); err != nil {
			return err
		}
		// A write that changes nothing is no write.
		same := existing.DeepCopy()
		if err := c.Patch(ctx, same, client.MergeFrom(existing.DeepCopy())); err != nil {
			return err
		}
		if err := c.Delete(ctx, gone.DeepCopy()); err != nil {
			return err
		}
		// The steps take a missing object's delete as done: not recorded.
		if err := c.Delete(ctx, configMap("never", nil)); !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	// Nothing changed in the API server.
	list := &corev1.ConfigMapList{}
	if err := api.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Errorf("the API server holds %d ConfigMaps, want the 2 it had", len(list.Items))
	}
	kept := &corev1.ConfigMap{}
	if err := api.Get(t.Context(), client.ObjectKeyFromObject(existing), kept); err != nil || !gocmp.Equal(kept.Data, existing.Data) {
		t.Errorf("kept is %v (%v), want unchanged %v", kept.Data, err, existing.Data)
	}
	want := []Write{
		{Target: TargetControlPlane, Verb: VerbCreate, Kind: "ConfigMap", Namespace: "kcp-system", Name: "new"},
		{Target: TargetControlPlane, Verb: VerbUpdate, Kind: "ConfigMap", Namespace: "kcp-system", Name: "kept",
			Changes: []Change{{Path: ".data.b", Old: "2", New: "3"}, {Path: ".data.c", New: "4"}}},
		{Target: TargetControlPlane, Verb: VerbDelete, Kind: "ConfigMap", Namespace: "kcp-system", Name: "gone"},
	}
	got := rec.Records()
	if len(got.Records) != 1 || got.Live {
		t.Fatalf("records %+v, want one of a shadow", got)
	}
	if diff := gocmp.Diff(want, got.Records[0].Writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if n := testutil.ToFloat64(rec.planned.WithLabelValues("runtime", "kcp-system", "rt-1", TargetControlPlane, "ConfigMap")); n != 3 {
		t.Errorf("planned writes metric %v, want 3", n)
	}

	// A pass that would write nothing leaves no record and no series.
	runPass(t, rec, "rt-1", func(context.Context) error { return nil })
	if got := rec.Records(); len(got.Records) != 0 {
		t.Errorf("records after a pass with no writes: %+v, want none", got.Records)
	}
	if n := testutil.CollectAndCount(rec.planned); n != 0 {
		t.Errorf("%d planned-writes series left, want none", n)
	}
}

// TestRefusedCredentialEndsThePassRecord: what a step writes after its kubeconfig request was
// refused follows from the refusal and is not recorded.
func TestRefusedCredentialEndsThePassRecord(t *testing.T) {
	api := fake.NewClientBuilder().Build()
	rec := newRecorder(t, prometheus.NewRegistry(), false)
	c := rec.Client(api, api, TargetGarden)
	runPass(t, rec, "rt-2", func(ctx context.Context) error {
		err := c.SubResource("adminkubeconfig").Create(ctx, configMap("shoot", nil), &corev1.ConfigMap{})
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Errorf("kubeconfig request: %v, want a RefusedError", err)
		}
		return client.IgnoreAlreadyExists(c.Create(ctx, configMap("after", nil)))
	})
	writes := rec.Records().Records[0].Writes
	if len(writes) != 1 || !writes[0].Refused || writes[0].Subresource != "adminkubeconfig" {
		t.Errorf("writes %+v, want only the refused kubeconfig request", writes)
	}
}

// TestLiveRecorderKeepsEveryWrite: a manager that writes for real keeps its writes across
// passes, and they land.
func TestLiveRecorderKeepsEveryWrite(t *testing.T) {
	api := fake.NewClientBuilder().Build()
	rec := newRecorder(t, prometheus.NewRegistry(), true)
	c := rec.Client(api, api, TargetRuntime)
	runPass(t, rec, "rt-3", func(ctx context.Context) error { return c.Create(ctx, configMap("one", nil)) })
	runPass(t, rec, "rt-3", func(context.Context) error { return nil })
	runPass(t, rec, "rt-3", func(ctx context.Context) error { return c.Create(ctx, configMap("two", nil)) })
	got := rec.Records()
	if !got.Live || len(got.Records) != 1 || len(got.Records[0].Writes) != 2 {
		t.Fatalf("records %+v, want one live record of both creates", got)
	}
	if w := got.Records[0].Writes; w[0].Pass != 1 || w[1].Pass != 2 || got.Records[0].Passes != 2 {
		t.Errorf("passes of the writes %d and %d of %d, want 1 and 2 of 2 (a pass that wrote nothing is not counted)", w[0].Pass, w[1].Pass, got.Records[0].Passes)
	}
	if err := api.Get(t.Context(), client.ObjectKey{Namespace: "kcp-system", Name: "two"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("a live write did not land: %v", err)
	}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	resp, err := http.Get(srv.URL) //nolint:noctx // a test server.
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var served Records
	if err := json.NewDecoder(resp.Body).Decode(&served); err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(got.Records[0].Writes, served.Records[0].Writes); diff != "" || !served.Live {
		t.Errorf("served records differ (-held +served):\n%s", diff)
	}
}

// TestUncertainWriteEndsThePassRecord: a dry run refused after the pass planned another write to
// the same object may fail only because that write was not made (Gardener deletes only a shoot
// whose deletion a patch confirmed); the record ends there. A refused write to an object the pass
// did not write before is the API server's answer, and the pass goes on.
func TestUncertainWriteEndsThePassRecord(t *testing.T) {
	api := interceptor.NewClient(fake.NewClientBuilder().WithObjects(configMap("shoot", nil)).Build(), interceptor.Funcs{
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.DeleteOption) error {
			return apierrors.NewForbidden(corev1.Resource("configmaps"), obj.GetName(), errors.New("deletion not confirmed"))
		},
	})
	rec := newRecorder(t, prometheus.NewRegistry(), false)
	c := rec.Client(api, api, TargetGarden)
	confirmAndDelete := func(ctx context.Context) error {
		before := configMap("shoot", nil)
		cm := configMap("shoot", nil)
		cm.Annotations = map[string]string{"confirmation.gardener.cloud/deletion": "true"}
		if err := c.Patch(ctx, cm, client.MergeFrom(before)); err != nil {
			return err
		}
		_ = c.Delete(ctx, configMap("shoot", nil))
		return c.Create(ctx, configMap("after", nil))
	}
	runPass(t, rec, "rt-4", confirmAndDelete)
	writes := rec.Records().Records[0].Writes
	if len(writes) != 2 || writes[0].Verb != VerbPatch || !writes[1].Uncertain || writes[1].Error == "" {
		t.Errorf("writes %+v, want the patch and the uncertain delete, and nothing after", writes)
	}
	runPass(t, rec, "rt-4", func(ctx context.Context) error {
		_ = c.Delete(ctx, configMap("shoot", nil))
		return c.Create(ctx, configMap("after", nil))
	})
	writes = rec.Records().Records[0].Writes
	if len(writes) != 2 || writes[0].Uncertain || writes[0].Error == "" || writes[1].Verb != VerbCreate {
		t.Errorf("writes %+v, want the refused delete, certain, and the create after it", writes)
	}
}

// protobufDeleteOptions encodes DeleteOptions with dryRun as client-go sends them for a built-in
// kind.
func protobufDeleteOptions(t *testing.T, dryRun []string) string {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, schema.GroupVersion{Version: "v1"})
	data, err := runtime.Encode(enc, &metav1.DeleteOptions{DryRun: dryRun})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestApplyRecordsCreateOrChanges: a server-side apply of an object that is not there is a create;
// of one that is, the values it changes.
func TestApplyRecordsCreateOrChanges(t *testing.T) {
	api := fake.NewClientBuilder().WithObjects(configMap("there", map[string]string{"a": "1"})).Build()
	rec := newRecorder(t, prometheus.NewRegistry(), false)
	c := rec.Client(api, api, TargetRuntime)
	apply := func(ctx context.Context, name, value string) error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("kcp-system")
		u.SetName(name)
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"a": value}, "data")
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.ForceOwnership)
	}
	runPass(t, rec, "rt-5", func(ctx context.Context) error {
		if err := apply(ctx, "new", "1"); err != nil {
			return err
		}
		return apply(ctx, "there", "2")
	})
	want := []Write{
		{Target: TargetRuntime, Verb: VerbCreate, Kind: "ConfigMap", Namespace: "kcp-system", Name: "new"},
		{Target: TargetRuntime, Verb: VerbApply, Kind: "ConfigMap", Namespace: "kcp-system", Name: "there",
			Changes: []Change{{Path: ".data.a", Old: "1", New: "2"}}},
	}
	if diff := gocmp.Diff(want, rec.Records().Records[0].Writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}
