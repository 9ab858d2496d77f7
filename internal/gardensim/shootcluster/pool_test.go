package shootcluster_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/pki"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/shootcluster"
)

// TestDedicatedClusterServesOpenIDConnect starts one dedicated API server
// and checks that it serves the OpenIDConnect API of Gardener's
// shoot-oidc-service extension, with its defaults and validation.
func TestDedicatedClusterServesOpenIDConnect(t *testing.T) {
	pool := newPool(t)
	s := shoot("oidc")
	waitReady(t, pool, s)
	kubeconfig, _, err := pool.Kubeconfig(s, "tester", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c := clientOf(t, kubeconfig)

	if err := c.Create(t.Context(), openIDConnect("kyma", "https://issuer.example.com")); err != nil {
		t.Fatalf("create OpenIDConnect: %v", err)
	}
	got := openIDConnect("", "")
	if err := c.Get(t.Context(), client.ObjectKey{Name: "kyma"}, got); err != nil {
		t.Fatalf("read OpenIDConnect: %v", err)
	}
	for field, want := range map[string]string{"usernameClaim": "sub", "groupsClaim": "groups"} {
		if v, _, _ := unstructured.NestedString(got.Object, "spec", field); v != want {
			t.Errorf("spec.%s = %q, want default %q", field, v, want)
		}
	}

	err = c.Create(t.Context(), openIDConnect("plain-http", "http://issuer.example.com"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.issuerURL") {
		t.Errorf("creating an OpenIDConnect with an http issuer: got %v, want an Invalid error naming spec.issuerURL", err)
	}
}

// TestSharedModePointsEveryShootAtOneServer starts the one API server of
// shared mode and checks that every shoot's kubeconfig reaches it, each under
// a path of its own.
func TestSharedModePointsEveryShootAtOneServer(t *testing.T) {
	pool := newPool(t, shootcluster.WithMode(shootcluster.ModeShared))

	a, b := shoot("a"), shoot("b")
	urlA, urlB := waitReady(t, pool, a), waitReady(t, pool, b)
	if urlA == urlB || hostOf(t, urlA) != hostOf(t, urlB) {
		t.Fatalf("shared mode: addresses %s and %s, want one server under two paths", urlA, urlB)
	}
	if err := pool.Remove(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*gardencorev1beta1.Shoot{a, b} {
		kubeconfig, notAfter, err := pool.Kubeconfig(s, "tester", 15*time.Minute)
		if err != nil {
			t.Fatalf("kubeconfig for %s: %v", s.Name, err)
		}
		if d := time.Until(notAfter); d > 15*time.Minute || d < 14*time.Minute {
			t.Errorf("kubeconfig expires in %v, want 15m", d)
		}
		c := clientOf(t, kubeconfig)
		if err := c.Get(t.Context(), client.ObjectKey{Name: "default"}, &corev1.Namespace{}); err != nil {
			t.Errorf("shoot %s cannot read its cluster: %v", s.Name, err)
		}
	}
}

// TestSharedModeGivesEveryShootItsOwnKymaSystem writes the
// kyma-provisioning-info ConfigMap of two shoots of shared mode, as the
// manager writes it (a server-side apply), and checks that each shoot reads
// its own, in a kyma-system namespace that a third shoot does not have; and
// that the front refuses a certificate the shoots' CA did not issue, and one
// that expired.
func TestSharedModeGivesEveryShootItsOwnKymaSystem(t *testing.T) {
	pool := newPool(t, shootcluster.WithMode(shootcluster.ModeShared))
	shoots := []*gardencorev1beta1.Shoot{shoot("a"), shoot("b"), shoot("c")}
	clients := map[string]client.Client{}
	for _, s := range shoots {
		waitReady(t, pool, s)
		kubeconfig, _, err := pool.Kubeconfig(s, "tester", 15*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		clients[s.Name] = clientOf(t, kubeconfig)
	}
	ctx := t.Context()
	for _, name := range []string{"a", "b"} {
		c := clients[name]
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shootcluster.OwnNamespace}}
		if err := c.Create(ctx, ns); err != nil {
			t.Fatalf("shoot %s: create namespace %s: %v", name, shootcluster.OwnNamespace, err)
		}
		if ns.Name != shootcluster.OwnNamespace {
			t.Errorf("shoot %s: created namespace %q, want %q", name, ns.Name, shootcluster.OwnNamespace)
		}
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "kyma-provisioning-info", "namespace": shootcluster.OwnNamespace},
			"data":     map[string]any{"details": "runtimeID: " + name},
		}}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner("tester"), client.ForceOwnership); err != nil {
			t.Fatalf("shoot %s: apply the ConfigMap: %v", name, err)
		}
	}
	for _, name := range []string{"a", "b"} {
		got := &corev1.ConfigMap{}
		if err := clients[name].Get(ctx, client.ObjectKey{Namespace: shootcluster.OwnNamespace, Name: "kyma-provisioning-info"}, got); err != nil {
			t.Fatalf("shoot %s: read the ConfigMap: %v", name, err)
		}
		if got.Namespace != shootcluster.OwnNamespace || got.Data["details"] != "runtimeID: "+name {
			t.Errorf("shoot %s reads the ConfigMap %s/%s with %v, want its own in %s", name, got.Namespace, got.Name, got.Data, shootcluster.OwnNamespace)
		}
	}
	err := clients["c"].Get(ctx, client.ObjectKey{Name: shootcluster.OwnNamespace}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `"`+shootcluster.OwnNamespace+`"`) {
		t.Errorf("shoot c reads namespace %s: %v, want NotFound naming %s", shootcluster.OwnNamespace, err, shootcluster.OwnNamespace)
	}

	kubeconfig, _, err := pool.Kubeconfig(shoots[0], "tester", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := other.IssueClient("tester", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CertData, cfg.KeyData = kp.CertPEM, kp.KeyPEM
	stranger, err := client.New(cfg, client.Options{})
	if err == nil {
		err = stranger.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})
	}
	if err == nil {
		t.Error("a certificate of another CA reached the cluster")
	}

	expiring, _, err := pool.Kubeconfig(shoots[1], "tester", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	cfg, err = clientcmd.RESTConfigFromKubeConfig(expiring)
	if err != nil {
		t.Fatal(err)
	}
	late, err := client.New(cfg, client.Options{})
	if err == nil {
		err = late.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})
	}
	if err == nil {
		t.Error("an expired certificate reached the cluster")
	}
}

// clientOf is a client of the cluster kubeconfig reaches.
func clientOf(t *testing.T, kubeconfig []byte) client.Client {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostOf is the host and port of address.
func hostOf(t *testing.T, address string) string {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// newPool starts an etcd and returns a dedicated-mode pool on it; both stop
// when the test ends.
func newPool(t *testing.T, opts ...shootcluster.Option) *shootcluster.Pool {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS must name the directory with kube-apiserver and etcd")
	}
	etcd := &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	if err := etcd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Stop() })
	pool := shootcluster.NewPool(etcd.URL, append([]shootcluster.Option{shootcluster.WithAssets(assets)}, opts...)...)
	t.Cleanup(func() {
		if err := pool.Close(); err != nil {
			t.Error(err)
		}
	})
	return pool
}

// openIDConnect is an OpenIDConnect of clientID "kyma" named name.
func openIDConnect(name, issuerURL string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("authentication.gardener.cloud/v1alpha1")
	o.SetKind("OpenIDConnect")
	o.SetName(name)
	if issuerURL != "" {
		o.Object["spec"] = map[string]any{"issuerURL": issuerURL, "clientID": "kyma"}
	}
	return o
}

func shoot(name string) *gardencorev1beta1.Shoot {
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden-p", UID: types.UID("uid-" + name)}}
	s.Status.TechnicalID = "shoot--p--" + name
	return s
}

// waitReady polls Ensure until the shoot's API server serves.
func waitReady(t *testing.T, pool *shootcluster.Pool, s *gardencorev1beta1.Shoot) string {
	t.Helper()
	var url string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		u, ready, err := pool.Ensure(ctx, s)
		url = u
		return ready, err
	})
	if err != nil {
		t.Fatalf("cluster of %s: %v", s.Name, err)
	}
	return url
}
