package integration_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

const project = "kyma"

// testAttempts is the attempt limit of every step in these tests.
const testAttempts = 6

var (
	env    *controlplane.ControlPlane
	sim    *gardensim.Simulator
	garden client.Client
	// managerClient is the running manager's own client, which reads through its caches.
	managerClient client.Client
	// managerDone is closed when the manager of these tests stops: it never does while they run.
	managerDone <-chan struct{}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	testenv.SetLogger()
	parts := &stack.Stack{}
	defer func() {
		if err := parts.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	scheme, err := testenv.Scheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = parts.StartControlPlane(ctx, stack.ControlPlaneOptions{Root: testenv.RepoRoot(), Assets: testenv.Assets(), Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tolerations, err := landscapeTolerations()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if sim, err = parts.StartSimulator(ctx, gardensim.WithAssets(testenv.Assets()), gardensim.WithProjects(project), gardensim.WithOperationDuration(2*time.Second),
		gardensim.WithAllowedTolerations(tolerations...)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := env.CreateNamespace(ctx, "kcp-system"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := setUpLandscape(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startManager(ctx, parts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// landscapeTolerations returns every toleration the landscape of these tests gives shoots, in
// any region: the test project allows them, as a real landscape configures its project, since
// Gardener's ShootTolerationRestriction refuses a shoot toleration its project does not allow.
func landscapeTolerations() ([]gardencorev1beta1.Toleration, error) {
	l, err := landscape.Load(managerOptions().ConverterConfigFilepath)
	if err != nil {
		return nil, fmt.Errorf("load landscape: %w", err)
	}
	return l.AllTolerations(), nil
}

// upstreamArgs are arguments upstream's Deployment passes its manager; the manager of these
// tests is started from them, so every lifecycle test runs a manager configured the way a
// landscape that moves from upstream configures it.
var upstreamArgs = []string{
	"--gardener-project-name=" + project, "--gardener-request-timeout=30s",
	"--gardener-ratelimiter-qps=20", "--gardener-ratelimiter-burst=40",
	"--runtime-ctrl-workers-cnt=4", "--gardener-cluster-ctrl-workers-cnt=4",
	"--converter-config-filepath=" + filepath.Join(testenv.FixturesDir(), "landscape", "converter_config.json"),
	"--audit-log-mandatory=true", "--api-server-acl-enabled=true",
	"--registry-cache-config-controller-enabled=false", "--runtime-bootstrapper-enabled=false",
	"--metrics-bind-address=0", "--health-probe-bind-address=0",
}

// managerOptions are the manager's options in these tests: upstream's arguments (the realistic
// landscape of testdata/landscape with API server ACLs on), then short policies and deadlines.
func managerOptions() manager.Options {
	o := manager.DefaultOptions()
	fs := flag.NewFlagSet("manager", flag.PanicOnError)
	o.BindFlags(fs)
	_ = fs.Parse(upstreamArgs)
	o.Namespace, o.SkipNameValidation = "kcp-system", true
	o.Retry = retry.Policy{Initial: time.Second, Factor: 2, Cap: 2 * time.Second, MaxAttempts: testAttempts, Jitter: 0.5}
	o.ShootCreateDeadline, o.ShootDeleteDeadline, o.KubeconfigDeadline, o.PollInterval = 60*time.Second, time.Minute, time.Minute, 2*time.Second
	o.GardenerCircuitThreshold, o.GardenerCircuitCooldown, o.GardenerReleaseWindow = 5, 3*time.Second, 3*time.Second
	// The shortest lifetime Gardener grants, rotated after about 6s, so rotation is seen.
	o.KubeconfigLifetime, o.KubeconfigRotateAfter = 10*time.Minute, 0.01
	return o
}

// startManager runs both controllers against the test API server and the simulator, with the
// wiring cmd/manager uses and short policies and deadlines.
// The stack stops it, and reports why it ended.
func startManager(ctx context.Context, parts *stack.Stack) error {
	mgr, err := parts.StartManager(ctx, stack.ManagerOptions{Config: env.Config, Garden: sim.RESTConfig(), Options: managerOptions()})
	if err != nil {
		return err
	}
	managerClient, managerDone = mgr.GetClient(), mgr.Done()
	if garden, err = client.New(sim.GardenAdminConfig(), client.Options{Scheme: mgr.GetScheme()}); err != nil {
		return err
	}
	return nil
}

// TestFixturesProvisionAndDeprovision provisions every upstream fixture to Ready, checks the
// shoot, the kubeconfig and the runtime cluster, then deletes it and checks nothing is left.
func TestFixturesProvisionAndDeprovision(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			callsBefore := gardenCalls(t)
			started := time.Now()
			rt := createFixture(t, file)
			rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool {
				return rt.Status.State == infrav1.StateReady
			})
			t.Logf("%s: Ready after %s with these Gardener calls (verb/code: count; kubeconfig rotation runs every ~6s here): %v",
				rt.Name, time.Since(started).Round(100*time.Millisecond), diffCalls(callsBefore, gardenCalls(t)))
			shoot := &gardencorev1beta1.Shoot{}
			if err := garden.Get(t.Context(), client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}, shoot); err != nil {
				t.Fatal(err)
			}
			assertShootMatches(t, rt, shoot)
			assertRuntimeCluster(t, rt)

			if err := env.Client.Delete(t.Context(), rt); err != nil {
				t.Fatal(err)
			}
			err := testenv.Eventually(t.Context(), 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
			})
			if err != nil {
				t.Fatalf("runtime not deleted: %v", err)
			}
			assertGone(t, garden, client.ObjectKeyFromObject(shoot), &gardencorev1beta1.Shoot{})
			assertGone(t, garden, client.ObjectKey{Namespace: shoot.Namespace, Name: gardener.AuthenticationConfigName(shoot.Name)}, &corev1.ConfigMap{})
			assertGone(t, env.Client, client.ObjectKey{Namespace: rt.Namespace, Name: rt.Labels[infrav1.LabelRuntimeID]}, &infrav1.GardenerCluster{})
			assertGone(t, env.Client, client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]}, &corev1.Secret{})
			err = testenv.Eventually(t.Context(), 30*time.Second, 200*time.Millisecond, func(context.Context) (bool, error) {
				return len(seriesOf(t, rt.Labels[infrav1.LabelRuntimeID])) == 0, nil
			})
			if err != nil {
				t.Errorf("metric series of the deleted runtime remain: %v", seriesOf(t, rt.Labels[infrav1.LabelRuntimeID]))
			}
		})
	}
}

// createFixture creates a fixture's Runtime with a runtime id of its own.
func createFixture(t *testing.T, file string) *infrav1.Runtime {
	t.Helper()
	objs, err := testenv.ReadObjects(file)
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := env.Client.Scheme().Convert(objs[0], rt, nil); err != nil {
		t.Fatal(err)
	}
	rt.Labels[infrav1.LabelRuntimeID] = "rid-" + rt.Name
	withOfferedVersion(rt)
	withGardenBinding(rt)
	withEUAccessInTheEU(rt)
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// withEUAccessInTheEU moves a runtime of the EU-access platform region cf-eu11 outside the EU
// (the upstream gcp example pairs it with us-central1) to the platform region cf-us30: its shoot
// gets the eu-access-only restriction, which Gardener refuses in a region that does not offer it
// (TestEUAccessOutsideTheEUIsRefused shows that).
func withEUAccessInTheEU(rt *infrav1.Runtime) {
	if rt.Spec.Shoot.PlatformRegion == "cf-eu11" && !strings.HasPrefix(rt.Spec.Shoot.Region, "eu") {
		rt.Spec.Shoot.PlatformRegion = "cf-us30"
	}
}

func waitForRuntime(t *testing.T, rt *infrav1.Runtime, timeout time.Duration, what string, cond func(*infrav1.Runtime) bool) *infrav1.Runtime {
	t.Helper()
	got := &infrav1.Runtime{}
	err := testenv.Eventually(t.Context(), timeout, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), got); err != nil {
			return false, err
		}
		return cond(got), nil
	})
	if err != nil {
		t.Fatalf("%s: %v; status: %+v", what, err, got.Status)
	}
	return got
}

// assertShootMatches checks the shoot Gardener has against what `kubectl runtime render` says
// the manager writes for rt: every field of the render holds the same value in the shoot (which
// may carry more, defaulted by Gardener), and the structured authentication ConfigMap exists
// with the rendered configuration.
func assertShootMatches(t *testing.T, rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot) {
	t.Helper()
	want, err := runtimectrl.Render(rt, shoot, renderOptions(t, rt))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	testenv.AssertSubset(t, "shoot spec", toJSON(t, want.Shoot.Spec), toJSON(t, shoot.Spec))
	if shoot.Spec.Kubernetes.KubeAPIServer == nil || shoot.Spec.Kubernetes.KubeAPIServer.OIDCConfig != nil { //nolint:staticcheck // SA1019: checking it is never set.
		t.Errorf("shoot kubeAPIServer = %+v, want structured authentication and no oidcConfig", shoot.Spec.Kubernetes.KubeAPIServer)
	}
	cm := &corev1.ConfigMap{}
	if err := garden.Get(t.Context(), client.ObjectKey{Namespace: shoot.Namespace, Name: gardener.AuthenticationConfigName(shoot.Name)}, cm); err != nil {
		t.Fatalf("structured authentication ConfigMap: %v", err)
	}
	if got, want := cm.Data[gardener.AuthenticationConfigKey], want.AuthenticationConfig.Data[gardener.AuthenticationConfigKey]; got != want {
		t.Errorf("structured authentication config.yaml = %q, want %q", got, want)
	}
	extensions := map[string]gardencorev1beta1.Extension{}
	for _, e := range shoot.Spec.Extensions {
		extensions[e.Type] = e
	}
	if oidc, ok := extensions[gardener.ExtensionOIDCService]; !ok || ptr.Deref(oidc.Disabled, false) {
		t.Errorf("shoot extensions: %s is not enabled: %+v", gardener.ExtensionOIDCService, shoot.Spec.Extensions)
	}
	filter := extensions[gardener.ExtensionNetworkingFilter]
	if got, want := ptr.Deref(filter.Disabled, false), !rt.Spec.Security.Networking.Filter.Egress.Enabled; got != want {
		t.Errorf("shoot extension %s: disabled %v, want %v", gardener.ExtensionNetworkingFilter, got, want)
	}
	wantBlackholing := fmt.Sprintf(`"blackholingEnabled":%t`, rt.Spec.Security.Networking.Filter.Ingress != nil && rt.Spec.Security.Networking.Filter.Ingress.Enabled)
	if filter.ProviderConfig == nil || !strings.Contains(string(filter.ProviderConfig.Raw), wantBlackholing) {
		t.Errorf("shoot extension %s: providerConfig %v, want it to hold %s", gardener.ExtensionNetworkingFilter, filter.ProviderConfig, wantBlackholing)
	}
}

// toJSON returns v as decoded JSON.
func toJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertOpenIDConnects finds one OpenIDConnect per additional OIDC provider of rt in the runtime
// cluster, named after its position, with the provider's settings, and no other managed ones.
func assertOpenIDConnects(t *testing.T, c client.Client, rt *infrav1.Runtime) {
	t.Helper()
	var want []infrav1.OIDCConfig
	if extra := gardener.AdditionalOIDC(rt, renderOptions(t, nil).DefaultAdditionalOIDC); extra != nil {
		want = *extra
	}
	if have := managedOpenIDConnects(t, c); len(have) != len(want) {
		t.Errorf("managed OpenIDConnects: got %d, want %d", len(have), len(want))
	}
	for i, cfg := range want {
		name := gardener.OpenIDConnectName(i)
		o := openIDConnect(name)
		if err := c.Get(t.Context(), client.ObjectKey{Name: name}, o); err != nil {
			t.Errorf("OpenIDConnect %s: %v", name, err)
			continue
		}
		for field, want := range map[string]*string{
			"issuerURL":      cfg.IssuerURL,
			"clientID":       cfg.ClientID,
			"usernameClaim":  cfg.UsernameClaim,
			"usernamePrefix": cfg.UsernamePrefix,
			"groupsClaim":    cfg.GroupsClaim,
		} {
			if want == nil {
				continue
			}
			if got, _, _ := unstructured.NestedString(o.Object, "spec", field); got != *want {
				t.Errorf("OpenIDConnect %s spec.%s: got %q, want %q", name, field, got, *want)
			}
		}
		if len(cfg.SigningAlgs) > 0 {
			got, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "supportedSigningAlgs")
			if fmt.Sprint(got) != fmt.Sprint(cfg.SigningAlgs) {
				t.Errorf("OpenIDConnect %s spec.supportedSigningAlgs: got %v, want %v", name, got, cfg.SigningAlgs)
			}
		}
	}
}

// assertRuntimeCluster reaches the shoot's cluster with the stored kubeconfig and finds
// kyma-system, the additional OIDC providers and one administrator binding per administrator.
func assertRuntimeCluster(t *testing.T, rt *infrav1.Runtime) {
	t.Helper()
	c := runtimeClient(t, rt)
	if err := c.Get(t.Context(), client.ObjectKey{Name: runtimectrl.KymaNamespace}, &corev1.Namespace{}); err != nil {
		t.Errorf("kyma-system in the runtime cluster: %v", err)
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(t.Context(), bindings, client.MatchingLabels{runtimectrl.LabelManagedBy: runtimectrl.FieldOwner}); err != nil {
		t.Fatal(err)
	}
	assertOpenIDConnects(t, c, rt)
	if len(bindings.Items) != len(rt.Spec.Security.Administrators) {
		t.Errorf("administrator bindings: got %d, want %d", len(bindings.Items), len(rt.Spec.Security.Administrators))
	}
	for _, b := range bindings.Items {
		if b.RoleRef.Name != "cluster-admin" || len(b.Subjects) != 1 {
			t.Errorf("binding %s: got %+v", b.Name, b)
		}
	}
}

func assertGone(t *testing.T, c client.Client, key client.ObjectKey, obj client.Object) {
	t.Helper()
	err := testenv.Eventually(t.Context(), time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, key, obj)), nil
	})
	if err != nil {
		t.Errorf("%T %s is still there: %v", obj, key, err)
	}
}

// gardenCalls reads infrastructure_manager_gardener_requests_total by verb and code.
func gardenCalls(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "infrastructure_manager_gardener_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var verb, code string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "verb":
					verb = l.GetValue()
				case "code":
					code = l.GetValue()
				}
			}
			calls[verb+"/"+code] = m.GetCounter().GetValue()
		}
	}
	return calls
}

func diffCalls(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// seriesOf lists the metrics that still have a series for the runtime id.
func seriesOf(t *testing.T, runtimeID string) []string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "runtime_id" && l.GetValue() == runtimeID {
					names = append(names, f.GetName())
				}
			}
		}
	}
	return names
}
