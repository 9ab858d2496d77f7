package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
)

// The step tests run each step against in-memory stores, in milliseconds and without an API
// server: the cluster the Runtimes live in (kcp), the Gardener project (garden) and the
// runtimes' own clusters are controller-runtime's fake clients, which keep objects in memory
// and apply server-side; a fake clock tells the time. The envtest suites in integration/ run
// the same steps end to end against kube-apiserver and the Gardener simulator.

const (
	testNamespace = "kcp-system"
	testProject   = "garden-kyma"
)

// t0 is the fake clock's start.
var t0 = time.Date(2040, 3, 14, 12, 0, 0, 0, time.UTC)

var (
	schemeOnce sync.Once
	testScheme *runtime.Scheme
)

// scheme knows the project's types, Gardener's and Kubernetes' own.
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	schemeOnce.Do(func() {
		s := runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, infrav1.AddToScheme, gardencorev1beta1.AddToScheme} {
			if err := add(s); err != nil {
				panic(err)
			}
		}
		testScheme = s
	})
	return testScheme
}

// world is what a step runs against: three kinds of in-memory clusters and a clock. Faults make
// a call fail the way an API server or Gardener fails it; calls records every call that reached
// a store, so a test can say a step wrote nothing.
type world struct {
	t      *testing.T
	kcp    client.Client
	garden client.Client
	// runtime is the cluster of every Runtime whose kubeconfig Secret holds runtimeKubeconfig.
	runtime client.Client
	clock   *clocktesting.FakeClock
	steps   steps

	mu     sync.Mutex
	faults []fault
	calls  []string
}

// runtimeKubeconfig is what the kubeconfig Secrets of the step tests hold: a kubeconfig of
// the cluster at https://runtime.test.
var runtimeKubeconfig = testKubeconfig("runtime")

// testKubeconfig is a kubeconfig with a token for the cluster at https://<name>.test, which
// hostOf names again.
func testKubeconfig(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s.test"}}]
users: [{name: u, user: {token: not-a-secret}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, name)
}

// hostOf is the name of the testKubeconfig that made cfg.
func hostOf(cfg *rest.Config) string {
	return strings.TrimSuffix(strings.TrimPrefix(cfg.Host, "https://"), ".test")
}

// fault fails the calls of one store, verb and kind (any of them when empty) with err, times
// times (every time when 0).
type fault struct {
	store, verb, kind string
	err               error
	times             int
}

// newWorld returns a world holding objs, each put in the store its type lives in: Runtimes,
// GardenerClusters, Secrets and ConfigMaps of the Runtimes' namespace in kcp; Shoots, Seeds
// and ConfigMaps of the project in garden.
func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	w := &world{t: t, clock: clocktesting.NewFakeClock(t0)}
	// The landscape has a ready seed where upstream's AWS example runs (newTestRuntime).
	var kcp, garden []client.Object
	for _, o := range append([]client.Object{testSeed("aws", "eu-central-1", true)}, objs...) {
		switch o.GetNamespace() {
		case testProject, "":
			garden = append(garden, o)
		default:
			kcp = append(kcp, o)
		}
	}
	w.kcp = w.store("kcp", kcp, &infrav1.Runtime{}, &infrav1.GardenerCluster{})
	w.garden = w.store("garden", garden, &gardencorev1beta1.Shoot{})
	w.runtime = w.store("runtime", nil)
	w.steps = steps{Config: Config{
		Client:          w.kcp,
		Garden:          w.garden,
		GardenNamespace: testProject,
		Render:          renderOptions(t),
		Kubeconfigs:     ReadKubeconfigSecrets(w.kcp),
		Clusters: NewCachedClusters(ReadKubeconfigSecrets(w.kcp), func(_ context.Context, cfg *rest.Config) (client.Client, error) {
			if hostOf(cfg) != "runtime" {
				return nil, errors.New("the kubeconfig reaches no cluster")
			}
			return w.runtime, nil
		}, DefaultRuntimeClientCacheSize),
		Options: Options{PollInterval: 30 * time.Second},
	}}
	return w
}

// store is one in-memory cluster whose calls go through the world's faults and record.
func (w *world) store(name string, objs []client.Object, withStatus ...client.Object) client.Client {
	s := scheme(w.t)
	check := func(verb string, obj runtime.Object) error {
		return w.call(name, verb, kindOf(s, obj))
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(withStatus...).
		WithIndex(&infrav1.Runtime{}, IndexRuntimeID, runtimeIDOf).
		WithIndex(&infrav1.Runtime{}, IndexShootName, shootNameOf).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := check("get", obj); err != nil {
					return err
				}
				return c.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if err := check("list", list); err != nil {
					return err
				}
				return c.List(ctx, list, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := check("create", obj); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if err := check("update", obj); err != nil {
					return err
				}
				return c.Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if err := check("patch", obj); err != nil {
					return err
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if err := check("delete", obj); err != nil {
					return err
				}
				return c.Delete(ctx, obj, opts...)
			},
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				kind := ""
				if k, ok := obj.(interface{ GetKind() string }); ok {
					kind = k.GetKind()
				}
				if err := w.call(name, "apply", kind); err != nil {
					return err
				}
				return c.Apply(ctx, obj, opts...)
			},
		}).Build()
}

// kindOf names the kind of obj, or of the items of a list.
func kindOf(s *runtime.Scheme, obj runtime.Object) string {
	if u, ok := obj.(*unstructured.UnstructuredList); ok {
		return strings.TrimSuffix(u.GetKind(), "List")
	}
	gvk, err := apiutil.GVKForObject(obj, s)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(gvk.Kind, "List")
}

// call records a call and returns the error of the first fault that matches it.
func (w *world) call(store, verb, kind string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, store+" "+verb+" "+kind)
	for i := range w.faults {
		f := &w.faults[i]
		if f.store != store || (f.verb != "" && f.verb != verb) || (f.kind != "" && f.kind != kind) || f.times < 0 {
			continue
		}
		if f.times > 0 {
			if f.times--; f.times == 0 {
				f.times = -1
			}
		}
		return f.err
	}
	return nil
}

// fail adds faults.
func (w *world) fail(faults ...fault) {
	w.mu.Lock()
	w.faults = append(w.faults, faults...)
	w.mu.Unlock()
}

// writes returns the calls that wrote to store since the last reset.
func (w *world) writes(store string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.calls {
		parts := strings.Fields(c)
		if parts[0] == store && parts[1] != "get" && parts[1] != "list" {
			out = append(out, strings.Join(parts[1:], " "))
		}
	}
	return out
}

// reads counts the reads of kind from store since the last reset.
func (w *world) reads(store, kind string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.calls {
		if c == store+" get "+kind || c == store+" list "+kind {
			n++
		}
	}
	return n
}

// resetCalls forgets the calls so far.
func (w *world) resetCalls() { w.mu.Lock(); w.calls = nil; w.mu.Unlock() }

// get reads obj back from the store c by its name and namespace, failing the test if absent.
func (w *world) get(c client.Client, obj client.Object) {
	w.t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		w.t.Fatalf("get %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// stored returns rt as the control plane holds it now, resourceVersion included.
func (w *world) stored(rt *infrav1.Runtime) *infrav1.Runtime {
	w.t.Helper()
	got := rt.DeepCopy()
	w.get(w.kcp, got)
	return got
}

// absent reports whether c holds no obj of that name and namespace.
func (w *world) absent(c client.Client, obj client.Object) bool {
	w.t.Helper()
	err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatalf("get %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
	return apierrors.IsNotFound(err)
}

// create adds obj to store c.
func (w *world) create(c client.Client, obj client.Object) {
	w.t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		w.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// renderOptions are the render options of the realistic landscape the envtest suites run
// with (testdata/landscape/converter_config.json), in the project of the step tests.
func renderOptions(t *testing.T) gardener.RenderOptions {
	t.Helper()
	l, err := landscape.Load(filepath.Join(repoRoot, "testdata", "landscape", "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	o := l.RenderOptions(landscape.Options{})
	o.Namespace = testProject
	return o
}

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// newTestRuntime returns upstream's AWS example (testdata/upstream-runtimes/aws.yaml) as
// Runtime name in the Runtimes' namespace, with its own shoot and runtime id (rid-<name>), as
// the API server would return it once created.
func newTestRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "upstream-runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := yaml.Unmarshal(data, rt); err != nil {
		t.Fatal(err)
	}
	rt.Name, rt.Namespace, rt.Generation = name, testNamespace, 1
	rt.Spec.Shoot.Name = name
	rt.Labels[infrav1.LabelShootName] = name
	rt.Labels[infrav1.LabelRuntimeID] = "rid-" + name
	rt.CreationTimestamp.Time = t0
	return rt
}

// testGardenerCluster returns the GardenerCluster of runtime id id as this controller writes it
// for the Runtime holder: labelled with its name, for the shoot of the same name.
func testGardenerCluster(id, holder string) *infrav1.GardenerCluster {
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = id, testNamespace
	gc.Labels = map[string]string{LabelRuntimeName: holder, infrav1.LabelRuntimeID: id}
	gc.Spec.Shoot.Name = holder
	gc.Spec.Kubeconfig.Secret = infrav1.SecretKeyRef{Name: "kubeconfig-" + id, Namespace: testNamespace, Key: KubeconfigKey}
	return gc
}

// testSeed returns a visible seed of provider and region whose gardenlet is ready or not.
func testSeed(provider, region string, ready bool) *gardencorev1beta1.Seed {
	seed := &gardencorev1beta1.Seed{}
	seed.Name = provider + "-" + region
	seed.Labels = map[string]string{gardener.LabelSeedRegion: region}
	seed.Spec.Provider.Type, seed.Spec.Provider.Region = provider, region
	status := gardencorev1beta1.ConditionFalse
	if ready {
		status = gardencorev1beta1.ConditionTrue
	}
	seed.Status.Conditions = []gardencorev1beta1.Condition{{Type: gardencorev1beta1.GardenletReady, Status: status}}
	return seed
}

// testShoot names rt's shoot in the project, to read it back.
func testShoot(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
	shoot := &gardencorev1beta1.Shoot{}
	shoot.Name, shoot.Namespace = rt.Spec.Shoot.Name, testProject
	return shoot
}

// findCondition returns rt's condition of type typ, nil when it has none.
func findCondition(rt *infrav1.Runtime, typ string) *metav1.Condition {
	return meta.FindStatusCondition(rt.Status.Conditions, typ)
}

// trimGardenCache makes the steps read the garden as the manager does: shoots through Garden as
// the watch cache keeps them (gardener.TrimShoot), and past the cache through GardenReader,
// whose reads are recorded in the store "gardener".
func (w *world) trimGardenCache() {
	w.steps.Garden = trimmedGarden{Client: w.garden}
	w.steps.GardenReader = recordedReader{w: w, Reader: w.garden}
}

// trimmedGarden returns shoots trimmed as the garden cache keeps them.
type trimmedGarden struct{ client.Client }

func (g trimmedGarden) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := g.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if shoot, ok := obj.(*gardencorev1beta1.Shoot); ok {
		gardener.TrimShoot(shoot)
	}
	return nil
}

// recordedReader records its reads in the world's store "gardener" before it makes them.
type recordedReader struct {
	w *world
	client.Reader
}

func (r recordedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.w.call("gardener", "get", kindOf(scheme(r.w.t), obj)); err != nil {
		return err
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
