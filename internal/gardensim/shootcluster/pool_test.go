package shootcluster_test

import (
	"context"
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
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

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
// shared mode and checks that every shoot's kubeconfig reaches it.
func TestSharedModePointsEveryShootAtOneServer(t *testing.T) {
	pool := newPool(t, shootcluster.WithMode(shootcluster.ModeShared))

	a, b := shoot("a"), shoot("b")
	urlA := waitReady(t, pool, a)
	if urlB := waitReady(t, pool, b); urlB != urlA {
		t.Fatalf("shared mode gave two servers: %s and %s", urlA, urlB)
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
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Get(t.Context(), client.ObjectKey{Name: "default"}, &corev1.Namespace{}); err != nil {
			t.Errorf("shoot %s cannot read its cluster: %v", s.Name, err)
		}
	}
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
