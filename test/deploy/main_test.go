package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/deploy"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// project is the Gardener project of the landscape in testdata/landscape.
const project = "kyma"

// fieldManager applies the install, as an operator's kubectl would under its own name.
const fieldManager = "test-deploy"

var (
	env *controlplane.ControlPlane
	sim *gardensim.Simulator

	// objects is config/default rendered, in the order `kubectl apply` would take it.
	objects []*unstructured.Unstructured
	// applyErrs holds the API server's refusals of objects, by object.
	applyErrs map[string]error
	// installed is the rendered manager: its Deployment and the identity it runs as.
	installed installation

	// run is the manager the tests started under the installed identity; nil when the install
	// was refused.
	run *managerRun
	// runMetrics are the metrics of run, on controller-runtime's registry, which /metrics serves.
	// The registry takes each metric once, so a restarted manager takes them again.
	runMetrics *metrics.Metrics
)

// installation is what the tests read from the rendered manifests.
type installation struct {
	deployment *appsv1.Deployment
	container  corev1.Container
	// user is the ServiceAccount's user name, the identity the manager runs under.
	user string
	// config reaches the API server as that user, through impersonation.
	config *rest.Config
}

// managerRun is a manager running in the test process.
type managerRun struct {
	*stack.Manager
	metricsAddr, probeAddr string
}

// stop stops the manager and waits until it has; it releases the leader lease.
// Why it ended stays in Err.
func (r *managerRun) stop() { _ = r.Stop() }

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	defer controlplane.StopOnSignal()()
	ctx := context.Background()
	testenv.SetLogger()
	parts := &stack.Stack{}
	defer func() { _ = parts.Stop() }()
	scheme, err := testenv.Scheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = parts.StartControlPlane(ctx, stack.ControlPlaneOptions{Root: testenv.RepoRoot(), Assets: testenv.Assets(), Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := landscape.Load(converterConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The project allows the landscape's tolerations, as a real landscape configures it.
	if sim, err = parts.StartSimulator(ctx, gardensim.WithAssets(testenv.Assets()), gardensim.WithProjects(project), gardensim.WithOperationDuration(2*time.Second),
		gardensim.WithAllowedTolerations(l.AllTolerations()...)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := install(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(applyErrs) == 0 {
		if err := startManager(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { run.stop() }()
	}
	return m.Run()
}

// install renders config/default and applies every object: first the namespace, which the
// install expects to exist, and the Prometheus Operator's CRDs, which a control plane with
// Prometheus Operator has. Refusals are recorded in applyErrs for TestInstallIsAccepted; any
// other failure stops the tests.
func install(ctx context.Context) error {
	rendered, err := deploy.Render(filepath.Join(testenv.RepoRoot(), deploy.DefaultDir), "")
	if err != nil {
		return err
	}
	if objects, err = deploy.Objects(rendered); err != nil {
		return err
	}
	if installed, err = readInstallation(objects); err != nil {
		return err
	}
	if err := env.CreateNamespace(ctx, installed.deployment.Namespace); err != nil {
		return err
	}
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("testdata", "crd")}, ErrorIfPathMissing: true,
	})
	if err != nil {
		return fmt.Errorf("install the Prometheus Operator's CRDs: %w", err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	applyErrs = map[string]error{}
	for _, o := range objects {
		if err := apply(ctx, dyn, o, false); err != nil {
			applyErrs[describe(o)] = err
			continue
		}
		if o.GetKind() == "CustomResourceDefinition" {
			if err := waitEstablished(ctx, o.GetName()); err != nil {
				return err
			}
		}
	}
	return setUpLandscape(ctx)
}

// readInstallation finds the manager's Deployment and container in the rendered objects and
// the identity it runs as.
func readInstallation(objs []*unstructured.Unstructured) (installation, error) {
	var in installation
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		in.deployment = &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, in.deployment, true); err != nil {
			return in, fmt.Errorf("deployment %s: %w", o.GetName(), err)
		}
	}
	if in.deployment == nil {
		return in, errors.New("config/default renders no Deployment")
	}
	found := false
	for _, c := range in.deployment.Spec.Template.Spec.Containers {
		if c.Name == deploy.ManagerContainer {
			in.container, found = c, true
		}
	}
	if !found {
		return in, fmt.Errorf("deployment %s has no container %s", in.deployment.Name, deploy.ManagerContainer)
	}
	in.user = serviceaccount.MakeUsername(in.deployment.Namespace, in.deployment.Spec.Template.Spec.ServiceAccountName)
	in.config = rest.CopyConfig(env.Config)
	in.config.Impersonate = rest.ImpersonationConfig{UserName: in.user}
	return in, nil
}

// apply applies one object server-side, with strict field validation: a field the API server
// does not know is an error, not a warning (server-side apply refuses fields its schema does
// not declare in any case; Strict says so explicitly).
func apply(ctx context.Context, dyn dynamic.Interface, o *unstructured.Unstructured, dryRun bool) error {
	gvk := o.GroupVersionKind()
	mapping, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("map %s: %w", gvk, err)
	}
	data, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode %s: %w", describe(o), err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = dyn.Resource(mapping.Resource).Namespace(o.GetNamespace())
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict,
		// The CRDs and the admission policy are there already, created by testenv.
		Force: ptr.To(true)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts); err != nil {
		return fmt.Errorf("apply %s: %w", describe(o), err)
	}
	return nil
}

// waitEstablished waits until the API server serves a CRD's kind.
func waitEstablished(ctx context.Context, name string) error {
	err := testenv.Eventually(ctx, 30*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// describe names an object in messages.
func describe(o client.Object) string {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if o.GetNamespace() == "" {
		return kind + " " + o.GetName()
	}
	return kind + " " + o.GetNamespace() + "/" + o.GetName()
}

// setUpLandscape creates what the landscape of testdata/landscape names: the DNS and audit log
// Secrets and the audit policy in the Gardener project, and the ACL ConfigMap in the manager's
// namespace, which the manager watches with ACLs on.
func setUpLandscape(ctx context.Context) error {
	l, err := landscape.Load(converterConfig())
	if err != nil {
		return err
	}
	c, err := client.New(sim.GardenAdminConfig(), client.Options{})
	if err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	ns := gardensim.ProjectNamespace(project)
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: l.Config.Converter.DNS.SecretName}, StringData: map[string]string{"accessKeyID": "AKIAIOSFODNN7EXAMPLE", "secretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: l.Config.Converter.AuditLog.PolicyConfigMapName}, Data: map[string]string{
			"policy": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"}},
	}
	for _, regions := range l.AuditLogTenants {
		for _, t := range regions {
			objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: t.SecretName}, StringData: map[string]string{"clientID": "id", "clientSecret": "secret"}})
		}
	}
	for _, o := range objs {
		if err := client.IgnoreAlreadyExists(c.Create(ctx, o)); err != nil {
			return fmt.Errorf("create %s: %w", o.GetName(), err)
		}
	}
	acl, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "landscape", "acl-ips.yaml"))
	if err != nil {
		return err
	}
	for _, o := range acl {
		o.SetNamespace(installed.deployment.Namespace)
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the ACL ConfigMap: %w", err)
		}
	}
	return nil
}

func converterConfig() string {
	return filepath.Join(testenv.FixturesDir(), "landscape", "converter_config.json")
}

// startManager runs the manager with the rendered container's arguments, as the Pod would,
// under the rendered ServiceAccount's identity. Only what a test process must change differs:
// loopback ports, the simulator instead of the mounted Gardener kubeconfig, the landscape of
// testdata instead of the mounted one (with ACLs on, so that the ACL ConfigMap is watched), and
// short retry policies, deadlines and kubeconfig rotation. The running manager is run.
func startManager(ctx context.Context) error {
	o, err := shippedOptions()
	if err != nil {
		return err
	}
	r := &managerRun{}
	if r.metricsAddr, err = freeAddr(); err != nil {
		return err
	}
	if r.probeAddr, err = freeAddr(); err != nil {
		return err
	}
	o.MetricsBindAddress, o.HealthProbeBindAddress = r.metricsAddr, r.probeAddr
	o.ConverterConfigFilepath, o.APIServerACLEnabled = converterConfig(), true
	o.SkipNameValidation = true
	o.Workers, o.GardenerClusterWorkers = 4, 4
	o.Retry = retry.Policy{Initial: time.Second, Factor: 2, Cap: 2 * time.Second, MaxAttempts: 6, Jitter: 0.5}
	o.ShootCreateDeadline, o.ShootDeleteDeadline, o.KubeconfigDeadline, o.PollInterval = time.Minute, time.Minute, time.Minute, 2*time.Second
	// The shortest lifetime Gardener grants, rotated after about 6s, so that a rotation is seen.
	o.KubeconfigLifetime, o.KubeconfigRotateAfter = 10*time.Minute, 0.01
	if runMetrics == nil {
		if runMetrics, err = metrics.New(ctrlmetrics.Registry); err != nil {
			return err
		}
	}
	o.Metrics = runMetrics
	if r.Manager, err = stack.RunManager(ctx, stack.ManagerOptions{Config: installed.config, Garden: sim.RESTConfig(), Options: o}); err != nil {
		return err
	}
	run = r
	return nil
}

// shippedOptions parses the rendered container's arguments and environment into the manager's
// options, as cmd/manager does in the Pod.
func shippedOptions() (manager.Options, error) {
	o := manager.DefaultOptions()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	// cmd/manager's own flag; the test connects to the simulator instead.
	fs.String("gardener-kubeconfig", "", "")
	if err := fs.Parse(installed.container.Args); err != nil {
		return o, fmt.Errorf("the rendered manager's arguments %q: %w", installed.container.Args, err)
	}
	for _, e := range installed.container.Env {
		if e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			o.Namespace = installed.deployment.Namespace
		}
	}
	return o, nil
}

// freeAddr returns a free loopback address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// requireManager stops a test that needs the manager when the install was refused or the
// manager stopped.
func requireManager(t *testing.T) {
	t.Helper()
	if run == nil {
		t.Fatalf("the manager did not start: the install was refused (%d objects)", len(applyErrs))
	}
	select {
	case <-run.Done():
		t.Fatalf("the manager stopped: %v", run.Err())
	default:
	}
}
