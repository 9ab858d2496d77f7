package deploy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestMetricsNeedAToken scrapes the manager's metrics endpoint as the installed ServiceMonitor
// does, over HTTPS: without a token, and with the token of a ServiceAccount that is not bound
// to the metrics-reader ClusterRole, it is refused; with one that is bound, it answers with the
// metrics. Plain HTTP is not served.
func TestMetricsNeedAToken(t *testing.T) {
	requireManager(t)
	ctx := t.Context()
	reader := metricsReaderRole(t)
	const ns = "monitoring"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	scraper, stranger := serviceAccountToken(t, ns, "prometheus"), serviceAccountToken(t, ns, "stranger")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prometheus"}},
	}
	if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, binding)); err != nil {
		t.Fatal(err)
	}
	url := "https://" + run.metricsAddr + "/metrics"
	tests := []struct {
		// name describes the caller.
		name string
		// token is the bearer token sent; empty sends none.
		token string
		// want is the status the endpoint must answer.
		want int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token not bound to " + reader, stranger, http.StatusForbidden},
		{"a token bound to " + reader, scraper, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var body string
			// A new binding takes a moment to reach the authorizer.
			err := testenv.Eventually(t.Context(), 30*time.Second, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
				var err error
				code, body, err = get(ctx, url, tt.token)
				return err == nil && code == tt.want, err
			})
			if err != nil {
				t.Fatalf("GET %s: %d %q, want %d: %v", url, code, truncate(body), tt.want, err)
			}
			if tt.want == http.StatusOK && !strings.Contains(body, "controller_runtime_reconcile_total") {
				t.Errorf("GET %s answered without the controllers' metrics: %q", url, truncate(body))
			}
		})
	}
	if code, _, err := get(ctx, "http://"+run.metricsAddr+"/metrics", scraper); err == nil && code == http.StatusOK {
		t.Error("the metrics endpoint answers plain HTTP")
	}
}

// TestReadiness: the readiness check fails until the cache has started and synced, and the
// running manager reports itself ready and live on its probe port.
func TestReadiness(t *testing.T) {
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Client.Scheme(), DefaultNamespaces: map[string]cache.Config{"default": {}}})
	if err != nil {
		t.Fatal(err)
	}
	check := manager.CacheSynced(c)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/readyz", nil)
	if err := check(req); err == nil {
		t.Error("ready before the cache started")
	}
	if _, err := c.GetInformer(t.Context(), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	err = testenv.Eventually(t.Context(), 30*time.Second, 100*time.Millisecond, func(context.Context) (bool, error) {
		err := check(req)
		return err == nil, err
	})
	if err != nil {
		t.Errorf("not ready after the cache started: %v", err)
	}

	requireManager(t)
	for _, path := range []string{"/readyz", "/healthz"} {
		err := testenv.Eventually(t.Context(), 30*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
			code, _, err := get(ctx, "http://"+run.probeAddr+path, "")
			return code == http.StatusOK, err
		})
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
		}
	}
}

// metricsReaderRole is the name of the install's ClusterRole that allows getting /metrics.
func metricsReaderRole(t *testing.T) string {
	t.Helper()
	return roleGranting(t, "/metrics")
}

// roleGranting returns the name of the installed ClusterRole that allows getting path.
func roleGranting(t *testing.T, path string) string {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		role := &rbacv1.ClusterRole{}
		convert(t, o, role)
		if slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.NonResourceURLs, path) && slices.Contains(r.Verbs, "get")
		}) {
			return role.Name
		}
	}
	t.Fatalf("the install has no ClusterRole that allows getting %s", path)
	return ""
}

// serviceAccountToken creates a ServiceAccount and returns a token of it (TokenRequest).
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := client.IgnoreAlreadyExists(env.Client.Create(t.Context(), sa)); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// get sends a GET with an optional bearer token. The manager's certificate is self-signed, as
// the installed ServiceMonitor expects (insecureSkipVerify): what protects the metrics is the
// token.
func get(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", fmt.Errorf("request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, "", fmt.Errorf("read %s: %w", url, err)
	}
	return resp.StatusCode, string(body), nil
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
