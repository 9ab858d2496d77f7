package deploy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestShadowWritesNeedTheShadowReader starts a shadow with the shipped arguments (but
// --leader-elect, which a shadow refuses) as the installed ServiceAccount, beside the manager of
// these tests. It runs with the installed RBAC, and serves its records over HTTPS only to callers
// bound to the shadow-reader ClusterRole: a caller bound to the metrics-reader role, which a
// scraper has, is refused, since the records hold the shoots' values.
func TestShadowWritesNeedTheShadowReader(t *testing.T) {
	requireManager(t)
	ctx := t.Context()
	o, err := shippedOptions()
	if err != nil {
		t.Fatal(err)
	}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	o.MetricsBindAddress, o.HealthProbeBindAddress = addr, "0"
	o.ConverterConfigFilepath, o.APIServerACLEnabled = converterConfig(), true
	o.SkipNameValidation, o.LeaderElect, o.Shadow = true, false, true
	// Its own metrics: the running manager serves its own on controller-runtime's registry.
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	o.Metrics, o.Recorder = m, shadow.NewRecorder(m.Shadow, false)
	mgr, err := manager.New(installed.config, sim.RESTConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the shadow stopped with %v", err)
		}
	}()

	const ns = "migration"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	reader, scraper := serviceAccountToken(t, ns, "migrator"), serviceAccountToken(t, ns, "scraper")
	for sa, role := range map[string]string{"migrator": roleGranting(t, shadow.HandlerPath), "scraper": metricsReaderRole(t)} {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
		}
		if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, binding)); err != nil {
			t.Fatal(err)
		}
	}
	url := "https://" + addr + shadow.HandlerPath
	for _, tt := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a scraper's token, bound to the metrics reader", scraper, http.StatusForbidden},
		{"a token bound to the shadow reader", reader, http.StatusOK},
	} {
		var code int
		var body string
		err := testenv.Eventually(ctx, 30*time.Second, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			var err error
			code, body, err = get(ctx, url, tt.token)
			return err == nil && code == tt.want, err
		})
		if err != nil {
			t.Errorf("%s: GET %s: %d %q, want %d: %v", tt.name, url, code, truncate(body), tt.want, err)
			continue
		}
		if tt.want != http.StatusOK {
			continue
		}
		var recs shadow.Records
		if err := json.Unmarshal([]byte(body), &recs); err != nil || recs.Live {
			t.Errorf("%s: the records %q do not decode as a shadow's: %v", tt.name, truncate(body), err)
		}
	}
	for _, target := range []string{shadow.TargetControlPlane, shadow.TargetGarden, shadow.TargetRuntime} {
		if n := testutil.ToFloat64(o.Recorder.RefusedRequests(target)); n != 0 {
			t.Errorf("the shadow's guard refused %v requests to the %s", n, target)
		}
	}
}
