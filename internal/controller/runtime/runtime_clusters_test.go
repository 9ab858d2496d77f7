package runtime

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// secretHolding is rt's kubeconfig Secret holding kubeconfig, or testKubeconfig(kubeconfig) when
// kubeconfig is a bare name.
func secretHolding(rt *infrav1.Runtime, kubeconfig string) *corev1.Secret {
	if !strings.Contains(kubeconfig, "\n") {
		kubeconfig = testKubeconfig(kubeconfig)
	}
	s := &corev1.Secret{Data: map[string][]byte{KubeconfigKey: []byte(kubeconfig)}}
	s.Name, s.Namespace = kubeconfigSecretName(rt), rt.Namespace
	s.Labels = map[string]string{infrav1.LabelShootName: rt.Spec.Shoot.Name}
	return s
}

// TestCachedClusters: a client is built once per runtime and kubeconfig, built again after a
// rotation, never handed out for another kubeconfig, and the cache keeps at most its size.
func TestCachedClusters(t *testing.T) {
	a, b, c := newTestRuntime(t, "a"), newTestRuntime(t, "b"), newTestRuntime(t, "c")
	w := newWorld(t, secretHolding(a, "a-1"), secretHolding(b, "b-1"), secretHolding(c, "c-1"))
	var built []string
	clusters := NewCachedClusters(ReadKubeconfigSecrets(w.kcp), func(_ context.Context, cfg *rest.Config) (client.Client, error) {
		kc := hostOf(cfg)
		if kc == "broken" {
			return nil, errors.New("no cluster there")
		}
		built = append(built, kc)
		return w.store("runtime-"+kc, nil), nil
	}, 2)
	connect := func(rt *infrav1.Runtime) {
		t.Helper()
		if _, err := clusters.Connect(t.Context(), rt); err != nil {
			t.Fatalf("connect %s: %v", rt.Name, err)
		}
	}
	rotate := func(rt *infrav1.Runtime, kubeconfig string) {
		t.Helper()
		s := secretHolding(rt, kubeconfig)
		if err := w.kcp.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}

	connect(a)
	connect(a)
	if len(built) != 1 {
		t.Errorf("two passes of one runtime built clients for %v, want one", built)
	}
	connect(b)
	rotate(a, "a-2")
	connect(a)
	if built[len(built)-1] != "a-2" {
		t.Errorf("after the rotation no client was built for the new kubeconfig: %v", built)
	}
	connect(c) // the cache holds a-2 and c now: b was used least recently
	connect(b)
	if want := []string{"a-1", "b-1", "a-2", "c-1", "b-1"}; strings.Join(built, " ") != strings.Join(want, " ") {
		t.Errorf("built clients for %v, want %v", built, want)
	}
	if clusters.Len() != 2 {
		t.Errorf("the cache keeps %d clients, want its size 2", clusters.Len())
	}

	rotate(c, "broken")
	if _, err := clusters.Connect(t.Context(), c); err == nil || !strings.Contains(err.Error(), "connect to runtime cluster") {
		t.Errorf("a kubeconfig that reaches nothing: %v, want the connect error", err)
	}
	rotate(c, "c-1")
	connect(c)
	if built[len(built)-1] != "c-1" || len(built) != 6 {
		t.Errorf("after a failed connect the old client was reused: built %v", built)
	}

	missing := newTestRuntime(t, "missing")
	if _, err := clusters.Connect(t.Context(), missing); err == nil || !strings.Contains(err.Error(), "get kubeconfig secret") {
		t.Errorf("no Secret: %v, want the Secret's error", err)
	}
}

// closeRecorder is a runtime client that records when its idle connections are closed.
type closeRecorder struct {
	client.Client
	name   string
	closed *[]string
}

func (c closeRecorder) CloseIdleConnections() { *c.closed = append(*c.closed, c.name) }

// TestCachedClustersCloseWhatTheyDrop: a client that leaves the cache, as the least recently used
// or after its kubeconfig was rotated, closes its idle connections; the clients kept stay open.
func TestCachedClustersCloseWhatTheyDrop(t *testing.T) {
	a, b, c := newTestRuntime(t, "a"), newTestRuntime(t, "b"), newTestRuntime(t, "c")
	w := newWorld(t, secretHolding(a, "a-1"), secretHolding(b, "b-1"), secretHolding(c, "c-1"))
	var closed []string
	clusters := NewCachedClusters(ReadKubeconfigSecrets(w.kcp), func(_ context.Context, cfg *rest.Config) (client.Client, error) {
		kc := hostOf(cfg)
		return closeRecorder{Client: w.store("runtime-"+kc, nil), name: kc, closed: &closed}, nil
	}, 2)
	connect := func(rt *infrav1.Runtime) {
		t.Helper()
		if _, err := clusters.Connect(t.Context(), rt); err != nil {
			t.Fatalf("connect %s: %v", rt.Name, err)
		}
	}
	connect(a)
	connect(b)
	if len(closed) != 0 {
		t.Fatalf("clients closed while the cache had room: %v", closed)
	}
	connect(c) // a goes: least recently used
	if err := w.kcp.Update(t.Context(), secretHolding(b, "b-2")); err != nil {
		t.Fatal(err)
	}
	connect(b) // b-1 goes: rotated
	if want := "a-1 b-1"; strings.Join(closed, " ") != want {
		t.Errorf("closed %v, want %s", closed, want)
	}
}

// TestCachedClustersCloseConnections: with real clients and a client certificate, as Gardener's
// admin kubeconfigs have, against a server that offers HTTP/2, the connection of a runtime whose
// client the cache dropped is closed, and the one of the runtime it keeps stays open. The
// clients speak HTTP/1.1 (see newConfigClient).
func TestCachedClustersCloseConnections(t *testing.T) {
	var mu sync.Mutex
	open, http2 := 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.ProtoMajor == 2 {
			http2++
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kyma-system"}}`))
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.StartTLS()
	defer srv.Close()
	openNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return open
	}

	a, b := newTestRuntime(t, "a"), newTestRuntime(t, "b")
	w := newWorld(t, secretHolding(a, clientCertKubeconfig(t, srv, "a")), secretHolding(b, clientCertKubeconfig(t, srv, "b")))
	clusters := NewCachedClusters(ReadKubeconfigSecrets(w.kcp), ConfigClient, 1)
	use := func(rt *infrav1.Runtime) {
		t.Helper()
		c, err := clusters.Connect(t.Context(), rt)
		if err != nil {
			t.Fatalf("connect %s: %v", rt.Name, err)
		}
		if err := c.Get(t.Context(), client.ObjectKey{Name: "kyma-system"}, &corev1.Namespace{}); err != nil {
			t.Fatalf("get namespace in %s's cluster: %v", rt.Name, err)
		}
	}
	use(a)
	if n := openNow(); n != 1 {
		t.Fatalf("%d connections open after a's request, want 1", n)
	}
	use(b) // the cache holds one client: a's goes
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return openNow() == 1, nil
	})
	if err != nil {
		t.Errorf("%d connections open after a's client was dropped, want b's alone", openNow())
	}
	mu.Lock()
	defer mu.Unlock()
	if http2 != 0 {
		t.Errorf("%d of 2 requests over HTTP/2, want none", http2)
	}
}

// TestDroppedRuntimeClientIsFreed: once the cache drops a runtime's client and closes its idle
// connection, nothing holds the client's transport, so the garbage collector frees it at once. An
// HTTP/2 connection's health check timer held a closed connection and its transport for 30
// seconds: a fleet re-checked faster than that kept a transport per re-check.
func TestDroppedRuntimeClientIsFreed(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kyma-system"}}`))
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()

	transport := func() weak.Pointer[http.Transport] {
		cfg, err := kubeconfig.RESTConfig("", []byte(clientCertKubeconfig(t, srv, "a")))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ConfigClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Get(t.Context(), client.ObjectKey{Name: "kyma-system"}, &corev1.Namespace{}); err != nil {
			t.Fatal(err)
		}
		closeIdle(c)
		return weak.Make(innermostTransport(t, c.(kubeconfigClient).http.Transport))
	}()

	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		goruntime.GC()
		return transport.Value() == nil, nil
	})
	if err != nil {
		t.Error("the transport of a dropped client is still held 5 seconds after its connection closed")
	}
}

// innermostTransport unwraps client-go's round trippers down to the HTTP transport.
func innermostTransport(t *testing.T, rt http.RoundTripper) *http.Transport {
	t.Helper()
	for {
		switch v := rt.(type) {
		case *http.Transport:
			return v
		case utilnet.RoundTripperWrapper:
			rt = v.WrappedRoundTripper()
		default:
			t.Fatalf("cannot unwrap the round tripper %T", rt)
			return nil
		}
	}
}

// clientCertKubeconfig is a kubeconfig for srv that authenticates with a client certificate of
// its own, named user.
func clientCertKubeconfig(t testing.TB, srv *httptest.Server, user string) string {
	t.Helper()
	cert := newTestCert(t, user, false, nil)
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: %s, user: {client-certificate-data: %q, client-key-data: %q}}]
contexts: [{name: c, context: {cluster: c, user: %s}}]
current-context: c
`, srv.URL, b64(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})), user, b64(cert.certPEM()), b64(cert.keyPEM(t, false)), user)
}

// TestCachedClustersRefuseAnotherShootsKubeconfig: a Secret holding the kubeconfig of another
// shoot reaches no cluster.
func TestCachedClustersRefuseAnotherShootsKubeconfig(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	secret := secretHolding(rt, "other's")
	secret.Labels[infrav1.LabelShootName] = "other"
	w := newWorld(t, secret)
	built := false
	clusters := NewCachedClusters(ReadKubeconfigSecrets(w.kcp), func(_ context.Context, _ *rest.Config) (client.Client, error) {
		built = true
		return w.runtime, nil
	}, 1)

	_, err := clusters.Connect(t.Context(), rt)

	if c := retry.Classify(err); c.Reason != ReasonKubeconfigOfAnotherShoot {
		t.Errorf("Connect: %v (%s), want %s", err, c.Reason, ReasonKubeconfigOfAnotherShoot)
	}
	if built {
		t.Error("a client was built from another shoot's kubeconfig")
	}
}

// TestCachedClustersRefuseAKubeconfigThatReadsFiles: a rewritten kubeconfig Secret that points
// the client at a local token file fails the step as the user's problem, naming the Secret and
// the field, and the token never leaves the machine: the server it names gets no request.
func TestCachedClustersRefuseAKubeconfigThatReadsFiles(t *testing.T) {
	var requests int
	var mu sync.Mutex
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests++
	}))
	defer srv.Close()
	rt := newTestRuntime(t, "a")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: false}}]
users: [{name: u, user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, srv.URL)
	w := newWorld(t, secretHolding(rt, kc))
	clusters := NewCachedClusters(ReadKubeconfigSecrets(w.kcp), ConfigClient, 1)

	_, err := clusters.Connect(t.Context(), rt)
	if err == nil {
		t.Fatal("connected, want refused")
	}
	if c := retry.Classify(err); c.Class != retry.ClassTerminal || c.Reason != ReasonKubeconfigRefused {
		t.Errorf("classified %s/%s, want Terminal/%s", c.Class, c.Reason, ReasonKubeconfigRefused)
	}
	secret := rt.Namespace + "/" + kubeconfigSecretName(rt)
	if msg := err.Error(); !strings.Contains(msg, secret) || !strings.Contains(msg, "users[u].user.tokenFile") {
		t.Errorf("error %q does not name the Secret %s and the field users[u].user.tokenFile", msg, secret)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 0 {
		t.Errorf("the server named by the refused kubeconfig got %d requests", requests)
	}
}

// BenchmarkRuntimeClusterRecheck is what a quiet re-check of a Ready runtime costs in its
// cluster: a client built from the runtime's kubeconfig (the cache holds the runtimes in flight,
// not the fleet, so a re-check half an hour later builds one again), a TLS handshake with a
// client certificate, and the three reads of the steps that configure the cluster: the
// OpenIDConnects, the provisioning info ConfigMap and the manager's administrator bindings. The
// server's side of the handshake runs in the same process and counts too.
func BenchmarkRuntimeClusterRecheck(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/"):
			_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kyma-provisioning-info","namespace":"kyma-system","uid":"6f1c0a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f","resourceVersion":"412","creationTimestamp":"2026-12-01T10:00:00Z","labels":{"operator.kyma-project.io/managed-by":"infrastructure-manager"}},"data":{"details":"globalAccountID: 3e64ebae-38b5-46a0-b1ed-9ccee153a0ae\ninfrastructureConfig:\n  apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\n  kind: InfrastructureConfig\n  networks:\n    vpc:\n      cidr: 10.250.0.0/22\n    zones:\n    - internal: 10.250.0.192/26\n      name: eu-central-1a\n      public: 10.250.0.128/26\n      workers: 10.250.0.0/26\ninstanceID: 00000000-0000-4000-8000-000000000000\nnetworkDetails:\n  dualStackIPEnabled: false\nregion: eu-central-1\nruntimeID: 9a2b1c3d-0000-4000-8000-000000000001\nseedRegion: eu-central-1\nsubaccountID: 0a1b2c3d-0000-4000-8000-000000000002\nworkerPools:\n  kyma:\n    autoScalerMax: 20\n    autoScalerMin: 3\n    haZones: true\n    machineType: m6i.large\n    name: cpu-worker-0\n"}}`))
		case strings.HasPrefix(r.URL.Path, "/apis/rbac.authorization.k8s.io/"):
			_, _ = w.Write([]byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBindingList","metadata":{"resourceVersion":"413"},"items":[{"metadata":{"name":"kyma-admin-0a1b2c3d4e5f6a7b","uid":"7f1c0a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f","resourceVersion":"413","creationTimestamp":"2026-12-01T10:00:01Z","labels":{"operator.kyma-project.io/managed-by":"infrastructure-manager"}},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"admin@example.com"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"}}]}`))
		default:
			_, _ = w.Write([]byte(`{"apiVersion":"authentication.gardener.cloud/v1alpha1","kind":"OpenIDConnectList","metadata":{"resourceVersion":"414"},"items":[{"apiVersion":"authentication.gardener.cloud/v1alpha1","kind":"OpenIDConnect","metadata":{"name":"kyma-oidc-0","resourceVersion":"414","labels":{"operator.kyma-project.io/managed-by":"infrastructure-manager"}},"spec":{"issuerURL":"https://issuer.example.com","clientID":"kyma","usernameClaim":"sub","usernamePrefix":"-","groupsClaim":"groups","supportedSigningAlgs":["RS256"]}}]}`))
		}
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()
	parsed, err := kubeconfig.RESTConfig("", []byte(clientCertKubeconfig(b, srv, "a")))
	if err != nil {
		b.Fatal(err)
	}
	conn := connectionOf(parsed)
	oidc := &unstructured.UnstructuredList{}
	b.ReportAllocs()
	for b.Loop() {
		c, err := ConfigClient(b.Context(), conn.restConfig())
		if err != nil {
			b.Fatal(err)
		}
		oidc.SetGroupVersionKind(gardener.OpenIDConnectGVK.GroupVersion().WithKind(gardener.OpenIDConnectGVK.Kind + "List"))
		if err := c.List(b.Context(), oidc); err != nil {
			b.Fatal(err)
		}
		if info, err := readProvisioningInfo(b.Context(), c); err != nil || info == nil {
			b.Fatalf("read the provisioning info: %v, %v", info, err)
		}
		if err := c.List(b.Context(), &rbacv1.ClusterRoleBindingList{}, client.MatchingLabels{LabelManagedBy: FieldOwner}); err != nil {
			b.Fatal(err)
		}
		closeIdle(c)
	}
}
