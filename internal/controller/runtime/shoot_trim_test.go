package runtime

import (
	"os"
	"path/filepath"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestTrimmedShootPlansTheSame checks that the garden cache's trim of a shoot loses nothing the
// ApplyShoot step reads. For every fixture Runtime, under the realistic and the minimal
// landscape, it renders the shoot, lets Gardener's own defaulting fill it as gardener-apiserver
// does, changes it as Gardener or a person might, and plans the write on the whole shoot and on
// the trimmed one: the plans must be the same. A render that starts to set a field the trim
// drops fails here, because the trimmed shoot then lacks a value the whole one holds.
func TestTrimmedShootPlansTheSame(t *testing.T) {
	landscapes := map[string]gardener.RenderOptions{
		"realistic": loadLandscape(t, "converter_config.json", landscape.Options{AuditLogMandatory: true,
			ACL: &gardener.ACL{OperatorCIDRs: []string{"198.51.100.0/29"}, ControlPlaneCIDR: "192.0.2.10/32"}}),
		"minimal": loadLandscape(t, "minimal.json", landscape.Options{}),
	}
	drifts := []struct {
		name   string
		reason string
		change func(*gardencorev1beta1.Shoot)
	}{
		{name: "as applied", reason: "a shoot that holds the render plans no write either way",
			change: func(*gardencorev1beta1.Shoot) {}},
		{name: "worker maximum", reason: "a drifted value the render sets is applied back either way",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Maximum += 7 }},
		{name: "newer Kubernetes", reason: "the render keeps a higher running version, which it reads from the shoot",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.99.0" }},
		{name: "API server feature gate", reason: "the render sets the API server's feature gates, the trim keeps them",
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Kubernetes.KubeAPIServer.FeatureGates = map[string]bool{"SomeGate": true}
			}},
		{name: "kubelet without gates", reason: "kubelet settings the render does not set are no drift",
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Kubernetes.Kubelet = &gardencorev1beta1.KubeletConfig{FailSwapOn: ptr.To(false)}
			}},
		{name: "unrendered settings", reason: "a person's edit of a setting the render leaves to Gardener is no drift",
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Kubernetes.KubeProxy.Mode = ptr.To(gardencorev1beta1.ProxyModeIPVS)
				s.Spec.Kubernetes.VerticalPodAutoscaler.EvictionTolerance = ptr.To(0.9)
			}},
	}
	for _, file := range testenv.RuntimeFiles(t) {
		rt := testenv.ReadRuntime(t, file)
		for lname, opts := range landscapes {
			r, err := Render(rt, nil, opts)
			if err != nil {
				t.Fatalf("%s under %s: render: %v", filepath.Base(file), lname, err)
			}
			for _, d := range drifts {
				t.Run(filepath.Base(file)+"/"+lname+"/"+d.name, func(t *testing.T) {
					whole := defaultedLikeGardener(t, r.Shoot)
					if whole.Spec.Kubernetes.VerticalPodAutoscaler == nil || whole.Spec.Kubernetes.KubeProxy == nil {
						t.Fatal("Gardener's defaulting set no VPA or kube-proxy settings: the test would not trim anything")
					}
					d.change(whole)
					trimmed := gardener.TrimShoot(whole.DeepCopy())
					if k := trimmed.Spec.Kubernetes; k.VerticalPodAutoscaler != nil || k.KubeProxy != nil {
						t.Fatalf("the trim kept the VPA or kube-proxy settings: %+v", k)
					}
					want, err := PlanShoot(rt, whole, opts)
					if err != nil {
						t.Fatalf("plan on the whole shoot: %v", err)
					}
					got, err := PlanShoot(rt, trimmed, opts)
					if err != nil {
						t.Fatalf("plan on the trimmed shoot: %v", err)
					}
					if diff := cmp.Diff(want, got, cmp.AllowUnexported(ShootPlan{})); diff != "" {
						t.Errorf("%s: the trimmed shoot plans another write (-whole +trimmed):\n%s", d.reason, diff)
					}
				})
			}
		}
	}
}

// defaultedLikeGardener returns shoot with the defaults gardener-apiserver fills in: those of
// the API types' defaulting functions, and the Kubernetes settings its registry adds, as
// testdata/gardener-defaulted-kubernetes.json recorded them.
func defaultedLikeGardener(t *testing.T, shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gardener-defaulted-kubernetes.json"))
	if err != nil {
		t.Fatal(err)
	}
	recorded := &gardencorev1beta1.Shoot{}
	if err := yaml.UnmarshalStrict(data, recorded); err != nil {
		t.Fatal(err)
	}
	out := shoot.DeepCopy()
	gardencorev1beta1.SetObjectDefaults_Shoot(out)
	k, def := &out.Spec.Kubernetes, recorded.Spec.Kubernetes
	k.KubeControllerManager, k.KubeScheduler, k.KubeProxy, k.VerticalPodAutoscaler = def.KubeControllerManager, def.KubeScheduler, def.KubeProxy, def.VerticalPodAutoscaler
	kubelet := def.Kubelet.DeepCopy()
	if k.Kubelet != nil {
		kubelet.FeatureGates = k.Kubelet.FeatureGates
	}
	k.Kubelet = kubelet
	if k.KubeAPIServer == nil {
		k.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{}
	}
	api, defAPI := k.KubeAPIServer, def.KubeAPIServer
	api.Requests, api.EventTTL, api.Logging = defAPI.Requests, defAPI.EventTTL, defAPI.Logging
	api.DefaultNotReadyTolerationSeconds, api.DefaultUnreachableTolerationSeconds = defAPI.DefaultNotReadyTolerationSeconds, defAPI.DefaultUnreachableTolerationSeconds
	api.EncryptionConfig = defAPI.EncryptionConfig
	return out
}

// loadLandscape returns the render options of a landscape configuration in testdata/landscape.
func loadLandscape(t *testing.T, file string, o landscape.Options) gardener.RenderOptions {
	t.Helper()
	l, err := landscape.Load(filepath.Join(testenv.FixturesDir(), "landscape", file))
	if err != nil {
		t.Fatal(err)
	}
	return l.RenderOptions(o)
}
