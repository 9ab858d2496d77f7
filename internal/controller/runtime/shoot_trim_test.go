package runtime

import (
	"os"
	"path/filepath"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestTrimmedShootAnswersTheSame checks that the garden cache's trim of a shoot loses nothing a
// step reads from the cache. For every fixture Runtime, under the realistic and the minimal
// landscape, it renders the shoot, lets Gardener's own defaulting fill it as gardener-apiserver
// does, gives it what Gardener adds (its own labels and annotations, a seed, a domain, a status),
// and asks the whole and the trimmed shoot the same questions: ApplyShoot's verdict, whose it
// is, how far Gardener got, the provisioning info, the domain and whether the API server has an
// address. ApplyShoot compares the spec itself on the shoot read from Gardener, so the trim drops
// the spec; a step that starts to read another field of it fails here.
func TestTrimmedShootAnswersTheSame(t *testing.T) {
	landscapes := map[string]gardener.RenderOptions{
		"realistic": loadLandscape(t, "converter_config.json", landscape.Options{AuditLogMandatory: true,
			ACL: &gardener.ACL{OperatorCIDRs: []string{"198.51.100.0/29"}, ControlPlaneCIDR: "192.0.2.10/32"}}),
		"minimal": loadLandscape(t, "minimal.json", landscape.Options{}),
	}
	for _, file := range testenv.RuntimeFiles(t) {
		rt := testenv.ReadRuntime(t, file)
		rt.ResourceVersion, rt.UID = "7", "runtime-uid"
		for lname, opts := range landscapes {
			t.Run(filepath.Base(file)+"/"+lname, func(t *testing.T) {
				r, err := Render(rt, nil, opts)
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				whole := asGardenerHasIt(t, r.Shoot)
				trimmed := gardener.TrimShoot(whole.DeepCopy())
				if len(trimmed.Spec.Provider.Workers) > 0 || trimmed.Spec.Kubernetes.Version != "" {
					t.Fatalf("the trim kept the spec the render compares: %+v", trimmed.Spec)
				}
				type answers struct {
					Verdict, Owner, Domain string
					Taken                  bool
					Observation            gardener.Observation
					Mirror                 *infrav1.GardenerStatus
					Upstream               infrav1.RuntimeStatus
					Info                   *corev1.ConfigMap
					Addressed              bool
				}
				ask := func(shoot *gardencorev1beta1.Shoot) answers {
					a := answers{Verdict: shootVerdict(rt, shoot, "inputs"), Owner: gardenOwner(shoot, rt),
						Taken: takenError(shoot, rt) != nil, Observation: gardener.Observe(shoot), Mirror: gardener.MirrorStatus(shoot),
						Addressed: gardenercluster.Addressed(shoot)}
					up := rt.DeepCopy()
					mirrorUpstreamStatus(up, shoot)
					a.Upstream = up.Status
					if a.Info, err = provisioningInfo(rt, shoot, "eu-central-1", true); err != nil {
						t.Fatal(err)
					}
					if d := shoot.Spec.DNS; d != nil && d.Domain != nil {
						a.Domain = *d.Domain
					}
					return a
				}
				want, got := ask(whole), ask(trimmed)
				if want.Verdict == "" || want.Domain == "" || !want.Addressed || want.Info.Data["details"] == "" {
					t.Fatalf("the whole shoot answers too little for the test to compare: %+v", want)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the trimmed shoot answers otherwise (-whole +trimmed):\n%s", diff)
				}
			})
		}
	}
}

// TestRenderSetsNoKeyOfGardenersOwn checks that the render sets no label or annotation that the
// garden cache drops as Gardener's own (gardener.OwnKey): ApplyShoot's verdict would not
// see a change of it.
func TestRenderSetsNoKeyOfGardenersOwn(t *testing.T) {
	landscapes := map[string]gardener.RenderOptions{
		"realistic": loadLandscape(t, "converter_config.json", landscape.Options{AuditLogMandatory: true}),
		"minimal":   loadLandscape(t, "minimal.json", landscape.Options{}),
	}
	for _, file := range testenv.RuntimeFiles(t) {
		rt := testenv.ReadRuntime(t, file)
		for lname, opts := range landscapes {
			r, err := Render(rt, nil, opts)
			if err != nil {
				t.Fatalf("%s under %s: render: %v", filepath.Base(file), lname, err)
			}
			for _, m := range []map[string]string{r.Shoot.Labels, r.Shoot.Annotations} {
				for k := range m {
					if gardener.OwnKey(k) {
						t.Errorf("%s under %s: the render sets %s, which the garden cache drops", filepath.Base(file), lname, k)
					}
				}
			}
		}
	}
}

// TestShootVerdictInputs checks what ends ApplyShoot's verdict: a new generation (a change of
// the spec), a label or annotation of the render's, another Runtime version; and what does not:
// a new status, and Gardener's own labels and annotations.
func TestShootVerdictInputs(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	rt.ResourceVersion = "7"
	shoot := &gardencorev1beta1.Shoot{}
	shoot.Name, shoot.UID, shoot.ResourceVersion, shoot.Generation = "rt", "shoot-uid", "40", 2
	shoot.Labels = map[string]string{LabelRuntimeName: "rt", "provider.extensions.gardener.cloud/aws": "true"}
	shoot.Annotations = map[string]string{AnnotationAppliedHash: "abc", "shoot.gardener.cloud/tasks": "deployInfrastructure"}
	base := shootVerdict(rt, shoot, "in")
	for _, tt := range []struct {
		name   string
		change func(*infrav1.Runtime, *gardencorev1beta1.Shoot)
		same   bool
	}{
		{"a new status", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) { s.ResourceVersion = "41" }, true},
		{"Gardener's tasks", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) { s.Annotations["shoot.gardener.cloud/tasks"] = "" }, true},
		{"Gardener's label gone", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) {
			delete(s.Labels, "provider.extensions.gardener.cloud/aws")
		}, true},
		{"a new generation", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) { s.Generation = 3 }, false},
		{"the render's annotation changed", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) { s.Annotations[AnnotationAppliedHash] = "def" }, false},
		{"the owner label gone", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) { delete(s.Labels, LabelRuntimeName) }, false},
		{"a label moved to the annotations", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) {
			delete(s.Labels, LabelRuntimeName)
			s.Annotations[LabelRuntimeName] = "rt"
		}, false},
		{"another shoot of the name", func(_ *infrav1.Runtime, s *gardencorev1beta1.Shoot) { s.UID = "other" }, false},
		{"another Runtime version", func(r *infrav1.Runtime, _ *gardencorev1beta1.Shoot) { r.ResourceVersion = "8" }, false},
	} {
		r, s := rt.DeepCopy(), shoot.DeepCopy()
		tt.change(r, s)
		if got := shootVerdict(r, s, "in"); (got == base) != tt.same {
			t.Errorf("%s: verdict %q, before %q; want the same: %v", tt.name, got, base, tt.same)
		}
	}
}

// asGardenerHasIt returns shoot as Gardener serves it once it runs: defaulted
// (defaultedLikeGardener), with Gardener's own labels and annotations, a seed, a domain, and the
// status of a reconciled shoot.
func asGardenerHasIt(t *testing.T, shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	t.Helper()
	out := defaultedLikeGardener(t, shoot)
	out.UID, out.ResourceVersion, out.Generation = "shoot-uid", "40", 2
	out.Labels["provider.extensions.gardener.cloud/aws"] = "true"
	out.Labels["name.seed.gardener.cloud/aws-eu-central-1"] = "true"
	out.Annotations["gardener.cloud/created-by"] = "kcp-operator"
	out.Annotations["shoot.gardener.cloud/tasks"] = "deployInfrastructure"
	out.Spec.SeedName = ptr.To("aws-eu-central-1")
	if out.Spec.DNS == nil {
		out.Spec.DNS = &gardencorev1beta1.DNS{}
	}
	out.Spec.DNS.Domain = ptr.To(out.Name + ".kyma.example")
	if out.Spec.Networking == nil {
		out.Spec.Networking = &gardencorev1beta1.Networking{}
	}
	out.Spec.Networking.IPFamilies = []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4, gardencorev1beta1.IPFamilyIPv6}
	out.Status = gardencorev1beta1.ShootStatus{
		ObservedGeneration: 2,
		LastOperation: &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile,
			State: gardencorev1beta1.LastOperationStateSucceeded, Progress: 100, Description: "Shoot cluster has been successfully reconciled."},
		Conditions:          []gardencorev1beta1.Condition{{Type: gardencorev1beta1.ShootAPIServerAvailable, Status: gardencorev1beta1.ConditionTrue}},
		TechnicalID:         "shoot--kyma--" + out.Name,
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: "https://api." + out.Name + ".kyma.example"}},
	}
	return out
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
