package manager

import (
	"flag"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// TestRenderOptionsFromFlags parses the landscape defaults from the command line, as the
// manager and `kubectl runtime render` do, and checks what the render gets.
func TestRenderOptionsFromFlags(t *testing.T) {
	tests := []struct {
		// name describes the case.
		name string
		// args is the command line.
		args []string
		// wantIssuer is the default OIDC issuer the render gets; empty means none.
		wantIssuer string
		// wantPrefix is the default provider's username prefix; nil means unset.
		wantPrefix *string
	}{
		{name: "no default OIDC without an issuer", args: []string{"--default-oidc-client-id", "kyma"}},
		{
			name: "default OIDC from its flags",
			args: []string{"--default-oidc-issuer-url", "https://operators.example.com", "--default-oidc-client-id", "ops",
				"--default-oidc-username-claim", "email", "--default-oidc-username-prefix", "-"},
			wantIssuer: "https://operators.example.com",
			wantPrefix: ptr.To("-"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			args := append([]string{"--gardener-project", "landscape", "--default-machine-image", "gardenlinux",
				"--default-machine-image-version", "1592.1.0"}, tt.args...)
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			c := o.RenderOptions(nil)
			if c.Namespace != "garden-landscape" || c.DefaultMachineImage != "gardenlinux" || c.DefaultMachineImageVersion != "1592.1.0" ||
				c.DefaultKubernetesVersion != DefaultOptions().DefaultKubernetesVersion {
				t.Errorf("render options = %+v", c)
			}
			if tt.wantIssuer == "" {
				if c.DefaultOIDC != nil {
					t.Errorf("default OIDC = %+v, want none", c.DefaultOIDC)
				}
				return
			}
			if c.DefaultOIDC == nil || ptr.Deref(c.DefaultOIDC.IssuerURL, "") != tt.wantIssuer ||
				ptr.Deref(c.DefaultOIDC.ClientID, "") != "ops" || ptr.Deref(c.DefaultOIDC.UsernameClaim, "") != "email" {
				t.Fatalf("default OIDC = %+v, want issuer %s", c.DefaultOIDC, tt.wantIssuer)
			}
			if !ptr.Equal(c.DefaultOIDC.UsernamePrefix, tt.wantPrefix) {
				t.Errorf("username prefix = %v, want %v", c.DefaultOIDC.UsernamePrefix, tt.wantPrefix)
			}
		})
	}
}

// TestNewRefusesABadLandscape stops the manager at start-up, before it connects anywhere, when
// the converter configuration is wrong or lacks what the flags ask of it; the error names the
// field and the file.
func TestNewRefusesABadLandscape(t *testing.T) {
	dir := filepath.Join(testenv.FixturesDir(), "landscape")
	tests := []struct {
		name string
		// config is the converter configuration file; acl turns ACLs on.
		config string
		acl    bool
		// want are fragments of the error.
		want []string
	}{
		{"unknown field", filepath.Join(dir, "invalid", "unknown-field.json"), false,
			[]string{filepath.Join(dir, "invalid", "unknown-field.json"), `unknown field "converter.kubernetes.enableKubernetesVersionAutoUpdates"`}},
		{"ACLs without the ACL ConfigMap", filepath.Join(dir, "minimal.json"), true,
			[]string{filepath.Join(dir, "minimal.json"), "converter.kubernetes.kubeApiServer.acl.configMapName: Required value"}},
		{"ACLs without a configuration", "", true, []string{"--api-server-acl-enabled needs --converter-config-filepath"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.ConverterConfigFilepath, o.APIServerACLEnabled = tt.config, tt.acl
			o.Metrics = freshMetrics(t)
			_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, &rest.Config{Host: "https://127.0.0.1:1"}, o)
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error = %v, want one containing %q", err, want)
				}
			}
		})
	}
}

// TestRenderOptionsFromLandscape takes the project and the defaults from the configuration
// file, not from the flags.
func TestRenderOptionsFromLandscape(t *testing.T) {
	o := DefaultOptions()
	o.ConverterConfigFilepath = filepath.Join(testenv.FixturesDir(), "landscape", "converter_config.json")
	o.DefaultKubernetesVersion = "1.30.5"
	l, err := o.Landscape()
	if err != nil {
		t.Fatal(err)
	}
	c := o.RenderOptions(l)
	if c.DefaultKubernetesVersion != "1.33.4" || c.DNS == nil || c.AuditLog == nil || !c.AuditLog.Mandatory {
		t.Errorf("render options = %+v, want the landscape's", c)
	}
}

// TestUpstreamArguments parses the arguments upstream's manager is deployed with: each sets the
// option of the same meaning, and a feature this manager lacks stops it when switched on.
func TestUpstreamArguments(t *testing.T) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	args := []string{
		"--leader-elect", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081",
		"--gardener-project-name=kyma-dev", "--gardener-request-timeout=3s",
		"--gardener-ratelimiter-qps=5", "--gardener-ratelimiter-burst=5",
		"--runtime-ctrl-workers-cnt=25", "--gardener-cluster-ctrl-workers-cnt=10",
		"--kubeconfig-expiration-time=24h", "--minimal-rotation-time=0.6",
		"--gardener-ctrl-reconcilation-timeout=60s", "--status-requeue-delay=1s", //nolint:misspell // Upstream's flag name.
		"--converter-config-filepath=" + filepath.Join(testenv.FixturesDir(), "landscape", "converter_config.json"),
		"--audit-log-mandatory=true", "--api-server-acl-enabled=false",
		"--registry-cache-config-controller-enabled=false", "--runtime-bootstrapper-enabled=false",
		"--runtime-bootstrapper-manifests-config-map-name=runtime-bootstrapper-manifests",
		"--runtime-bootstrapper-skr-namespace=kyma-system",
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("upstream's arguments: %v", err)
	}
	if !o.LeaderElect || o.GardenerProject != "kyma-dev" || o.GardenerRequestTimeout != 3*time.Second || o.GardenerQPS != 5 ||
		o.GardenerBurst != 5 || o.Workers != 25 || o.GardenerClusterWorkers != 10 || o.KubeconfigLifetime != 24*time.Hour ||
		o.KubeconfigRotateAfter != 0.6 || o.GardenerCtrlReconciliationTimeout != time.Minute || o.StatusRequeueDelay != time.Second ||
		!o.AuditLogMandatory || o.APIServerACLEnabled || o.ConverterConfigFilepath == "" {
		t.Errorf("options = %+v", o)
	}
	if err := o.unsupportedFeatures(); err != nil {
		t.Errorf("features off: %v", err)
	}
	if err := fs.Parse([]string{"--runtime-bootstrapper-enabled"}); err != nil {
		t.Fatal(err)
	}
	o.Metrics = freshMetrics(t)
	_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, &rest.Config{Host: "https://127.0.0.1:1"}, o)
	if err == nil || !strings.Contains(err.Error(), "--runtime-bootstrapper-enabled (the runtime bootstrapper)") {
		t.Errorf("error = %v, want one naming the unsupported feature", err)
	}
}

// TestManagerFlagsOfTheResilienceSettings checks the flags of the release window, the step
// timeout, the lease namespace and the default Gardener request timeout (upstream's 3s).
func TestManagerFlagsOfTheResilienceSettings(t *testing.T) {
	o := DefaultOptions()
	if o.GardenerRequestTimeout != 3*time.Second {
		t.Errorf("default Gardener request timeout %s, want upstream's 3s", o.GardenerRequestTimeout)
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--gardener-release-window=45s", "--step-timeout=90s", "--leader-election-namespace=leases"}); err != nil {
		t.Fatal(err)
	}
	if o.GardenerReleaseWindow != 45*time.Second || o.StepTimeout != 90*time.Second || o.LeaderElectionNamespace != "leases" {
		t.Errorf("parsed %s, %s, %q", o.GardenerReleaseWindow, o.StepTimeout, o.LeaderElectionNamespace)
	}
}

// TestBenchmarkFlags parses the flags a benchmark sets and checks their defaults: pprof off and
// the fsm's 30m re-check. The shipped binary has no flag of the benchmark's baseline.
func TestBenchmarkFlags(t *testing.T) {
	o := DefaultOptions()
	if o.PprofBindAddress != "0" || o.RuntimeRecheckInterval != 30*time.Minute {
		t.Errorf("defaults: pprof %q, re-check %s; want 0, 30m", o.PprofBindAddress, o.RuntimeRecheckInterval)
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--pprof-bind-address=127.0.0.1:6060", "--runtime-recheck-interval=5m"}); err != nil {
		t.Fatal(err)
	}
	if o.PprofBindAddress != "127.0.0.1:6060" || o.RuntimeRecheckInterval != 5*time.Minute {
		t.Errorf("parsed pprof %q, re-check %s", o.PprofBindAddress, o.RuntimeRecheckInterval)
	}
	if f := fs.Lookup("emulate-upstream-requeues"); f != nil {
		t.Errorf("the manager has the baseline's flag --%s", f.Name)
	}
}

// TestPollDefaults checks how the waiting steps poll by default: spread by ±10%, at Poll, and
// with the shoots watched.
func TestPollDefaults(t *testing.T) {
	o := DefaultOptions()
	if o.PollSpread != fsm.DefaultPollSpread || fsm.DefaultPollSpread != 0.1 || o.Polls != nil || o.UnwatchedShoots {
		t.Errorf("defaults: poll spread %v, Polls set %t, unwatched shoots %t; want 0.1, false, false", o.PollSpread, o.Polls != nil, o.UnwatchedShoots)
	}
}

// TestUnwatchedShootsAreReadFromGardener checks where the garden client reads shoots and
// ConfigMaps. By default both come from the watched cache. With UnwatchedShoots both come
// from the API server, as seeds always do (gardenclient.TestSeedsAreNeverCached).
func TestUnwatchedShootsAreReadFromGardener(t *testing.T) {
	o := DefaultOptions()
	o.Metrics = freshMetrics(t)
	for _, obj := range []client.Object{&gardencorev1beta1.Shoot{}, &corev1.ConfigMap{}} {
		if uncached(o.gardenOptions(nil, nil).Uncached, obj) {
			t.Errorf("with watched shoots %T is read from the API server, want the watched cache", obj)
		}
	}

	o.UnwatchedShoots = true
	for _, obj := range []client.Object{&gardencorev1beta1.Shoot{}, &corev1.ConfigMap{}} {
		if !uncached(o.gardenOptions(nil, nil).Uncached, obj) {
			t.Errorf("%T is read from the cache, want from the API server", obj)
		}
	}
}

// uncached reports whether objs, the kinds read from the API server, hold obj's type.
func uncached(objs []client.Object, obj client.Object) bool {
	return slices.ContainsFunc(objs, func(o client.Object) bool { return reflect.TypeOf(o) == reflect.TypeOf(obj) })
}

// TestNewRefusesNonPositiveIntervals stops the manager at start-up when Ready Runtimes would
// never be checked again, or constantly, and likewise for a Runtime's shoot progress.
func TestNewRefusesNonPositiveIntervals(t *testing.T) {
	intervals := map[string]func(*Options, time.Duration){
		"--runtime-recheck-interval": func(o *Options, d time.Duration) { o.RuntimeRecheckInterval = d },
		"--shoot-progress-refresh":   func(o *Options, d time.Duration) { o.ShootProgressRefresh = d },
		// A manager with no time to stop would be cut off in the middle of every shutdown.
		"--graceful-shutdown-timeout": func(o *Options, d time.Duration) { o.GracefulShutdownTimeout = d },
	}
	for flagName, set := range intervals {
		for _, d := range []time.Duration{0, -time.Minute} {
			o := DefaultOptions()
			set(&o, d)
			o.Metrics = freshMetrics(t)
			_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, &rest.Config{Host: "https://127.0.0.1:1"}, o)
			if err == nil || !strings.Contains(err.Error(), flagName) {
				t.Errorf("%s=%s: error %v, want one naming %s", flagName, d, err, flagName)
			}
		}
	}
}

// TestNewRefusesABadUpstreamLease: the lease of upstream's manager must be a lease name and not
// this manager's own; empty elects with the own lease only.
func TestNewRefusesABadUpstreamLease(t *testing.T) {
	for id, want := range map[string]string{
		"Upper_Case":     "is no lease name",
		LeaderElectionID: "is this manager's own lease",
	} {
		o := DefaultOptions()
		o.UpstreamLeaderElectionID = id
		o.Metrics = freshMetrics(t)
		_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, &rest.Config{Host: "https://127.0.0.1:1"}, o)
		if err == nil || !strings.Contains(err.Error(), "--upstream-leader-election-id") || !strings.Contains(err.Error(), want) {
			t.Errorf("--upstream-leader-election-id=%s: error %v, want one saying it %s", id, err, want)
		}
	}
}

// TestShootProgressRefresh checks --shoot-progress-refresh: 30s unless set.
func TestShootProgressRefresh(t *testing.T) {
	o := DefaultOptions()
	if o.ShootProgressRefresh != 30*time.Second {
		t.Errorf("default progress refresh %s, want 30s", o.ShootProgressRefresh)
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--shoot-progress-refresh=1m"}); err != nil {
		t.Fatal(err)
	}
	if o.ShootProgressRefresh != time.Minute {
		t.Errorf("parsed progress refresh %s, want 1m", o.ShootProgressRefresh)
	}
}

// TestNewBindsThePprofAddress builds a manager with --pprof-bind-address: New takes the address
// (the manager serves /debug/pprof/ there once started), so it refuses one already in use and
// holds a free one; "0" binds nothing.
func TestNewBindsThePprofAddress(t *testing.T) {
	newManager := func(pprof string) error {
		o := DefaultOptions()
		o.MetricsBindAddress, o.HealthProbeBindAddress, o.PprofBindAddress, o.SkipNameValidation = "0", "0", pprof, true
		o.Metrics = freshMetrics(t)
		_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, &rest.Config{Host: "https://127.0.0.1:1"}, o)
		return err
	}
	if err := newManager("0"); err != nil {
		t.Fatalf("without pprof: %v", err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	if err := newManager(busy.Addr().String()); err == nil || !strings.Contains(err.Error(), "pprof") {
		t.Errorf("pprof on a busy address: error %v, want one about the pprof listener", err)
	}

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	_ = free.Close()
	if err := newManager(addr); err != nil {
		t.Fatalf("pprof on %s: %v", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		_ = l.Close()
		t.Errorf("%s is still free after New, want it held for pprof", addr)
	}
}

// TestNewRefusesAShadowThatWouldLeadOrRecord: a shadow takes no lease, and records what it would
// write, not what it writes; each refusal names the flags.
func TestNewRefusesAShadowThatWouldLeadOrRecord(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shadow", "--leader-elect"}, "--shadow never leads"},
		{[]string{"--shadow", "--record-writes"}, "--record-writes is for a manager that makes them"},
	} {
		o := DefaultOptions()
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.BindFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		o.Metrics = freshMetrics(t)
		_, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, &rest.Config{Host: "https://127.0.0.1:1"}, o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// freshMetrics returns metrics on a registry of their own. Each New of a test takes them, since
// controller-runtime's registry takes each metric once.
func freshMetrics(t *testing.T) *metrics.Metrics {
	t.Helper()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}
