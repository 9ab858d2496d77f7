package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// secretHolding is rt's kubeconfig Secret holding kubeconfig.
func secretHolding(rt *infrav1.Runtime, kubeconfig string) *corev1.Secret {
	s := &corev1.Secret{Data: map[string][]byte{KubeconfigKey: []byte(kubeconfig)}}
	s.Name, s.Namespace = kubeconfigSecretName(rt), rt.Namespace
	return s
}

// TestCachedClusters: a client is built once per runtime and kubeconfig, built again after a
// rotation, never handed out for another kubeconfig, and the cache keeps at most its size.
func TestCachedClusters(t *testing.T) {
	a, b, c := newTestRuntime(t, "a"), newTestRuntime(t, "b"), newTestRuntime(t, "c")
	w := newWorld(t, secretHolding(a, "a-1"), secretHolding(b, "b-1"), secretHolding(c, "c-1"))
	var built []string
	clusters := NewCachedClusters(w.kcp, func(_ context.Context, kc []byte) (client.Client, error) {
		if string(kc) == "broken" {
			return nil, errors.New("no cluster there")
		}
		built = append(built, string(kc))
		return w.store("runtime-"+string(kc), nil), nil
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
