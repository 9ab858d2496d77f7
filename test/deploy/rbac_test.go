package deploy_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestNoWildcard: no rule of the install grants every group, resource, verb, name or URL.
func TestNoWildcard(t *testing.T) {
	for _, o := range objects {
		if o.GetKind() != "Role" && o.GetKind() != "ClusterRole" {
			continue
		}
		role := &rbacv1.ClusterRole{}
		convert(t, o, role)
		for _, r := range role.Rules {
			for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
				if slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
					t.Errorf("%s grants a wildcard: %+v", describe(o), r)
				}
			}
		}
	}
}

// TestClusterRoleOnlyForClusterScope: the manager's ServiceAccount is granted namespaced
// resources only in its namespace; every resource of a ClusterRole bound to it is
// cluster-scoped, as the API server's discovery says.
func TestClusterRoleOnlyForClusterScope(t *testing.T) {
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: installed.deployment.Spec.Template.Spec.ServiceAccountName, Namespace: installed.deployment.Namespace}
	bound := 0
	for _, o := range objects {
		if o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		b := &rbacv1.ClusterRoleBinding{}
		convert(t, o, b)
		if !slices.Contains(b.Subjects, sa) {
			continue
		}
		bound++
		role := &rbacv1.ClusterRole{}
		convert(t, findObject(t, "ClusterRole", b.RoleRef.Name), role)
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					resource, _, _ := strings.Cut(res, "/")
					kind, err := env.Client.RESTMapper().KindFor(schema.GroupVersionResource{Group: g, Resource: resource})
					if err != nil {
						t.Errorf("ClusterRole %s: %s in group %q: %v", role.Name, res, g, err)
						continue
					}
					mapping, err := env.Client.RESTMapper().RESTMapping(kind.GroupKind(), kind.Version)
					if err != nil {
						t.Fatal(err)
					}
					if mapping.Scope.Name() != meta.RESTScopeNameRoot {
						t.Errorf("ClusterRole %s grants the namespaced %s everywhere; grant it in a Role of %s", role.Name, res, sa.Namespace)
					}
				}
			}
		}
	}
	if bound == 0 {
		t.Errorf("no ClusterRoleBinding binds %s/%s", sa.Namespace, sa.Name)
	}
}

// TestServiceAccountIsConfined asks the API server as the manager's ServiceAccount: its
// namespace is open to it, nothing beyond is.
func TestServiceAccountIsConfined(t *testing.T) {
	ctx := t.Context()
	own := installed.deployment.Namespace
	const elsewhere = "tenant"
	if err := env.CreateNamespace(ctx, elsewhere); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{own, elsewhere} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "confinement-probe"}, StringData: map[string]string{"token": "not for the manager"}}
		if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, s)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.NewWithWatch(installed.config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		// name describes the request.
		name string
		// do sends it as the manager's ServiceAccount.
		do func(context.Context) error
		// allowed says whether the API server must allow it.
		allowed bool
	}{
		{"get a Secret of its namespace", func(ctx context.Context) error {
			return c.Get(ctx, client.ObjectKey{Namespace: own, Name: "confinement-probe"}, &corev1.Secret{})
		}, true},
		// The Runtime controller watches the kubeconfig Secrets of its namespace, as upstream's
		// manager does; RBAC cannot narrow that to their label, only to the namespace.
		{"list the Secrets of its namespace", func(ctx context.Context) error {
			return c.List(ctx, &corev1.SecretList{}, client.InNamespace(own))
		}, true},
		{"watch the Secrets of its namespace", func(ctx context.Context) error {
			w, err := c.Watch(ctx, &corev1.SecretList{}, client.InNamespace(own))
			if err == nil {
				w.Stop()
			}
			return err
		}, true},
		{"get a Secret of another namespace", func(ctx context.Context) error {
			return c.Get(ctx, client.ObjectKey{Namespace: elsewhere, Name: "confinement-probe"}, &corev1.Secret{})
		}, false},
		{"list Secrets cluster-wide", func(ctx context.Context) error { return c.List(ctx, &corev1.SecretList{}) }, false},
		{"list the Secrets of another namespace", func(ctx context.Context) error {
			return c.List(ctx, &corev1.SecretList{}, client.InNamespace(elsewhere))
		}, false},
		{"list ConfigMaps cluster-wide", func(ctx context.Context) error { return c.List(ctx, &corev1.ConfigMapList{}) }, false},
		{"list Runtimes cluster-wide", func(ctx context.Context) error { return c.List(ctx, &infrav1.RuntimeList{}) }, false},
		{"create a Runtime", func(ctx context.Context) error {
			rt := &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: own, Name: "not-by-the-manager"}}
			return c.Create(ctx, rt, client.DryRunAll)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(t.Context())
			switch {
			case tt.allowed && err != nil:
				t.Errorf("refused: %v", err)
			case !tt.allowed && !apierrors.IsForbidden(err):
				t.Errorf("got %v, want Forbidden", err)
			}
		})
	}
}

// TestManagerUnderItsServiceAccount: the manager, running as the installed ServiceAccount with
// the installed arguments, provisions a runtime to Ready, rotates its kubeconfig and
// deprovisions it, with nothing but the shipped RBAC, which lets it list and watch Secrets in its
// own namespace only.
func TestManagerUnderItsServiceAccount(t *testing.T) {
	requireManager(t)
	ctx := t.Context()
	rt := awsRuntime(t, "least-privilege")
	if err := env.Client.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	err := testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
			return false, err
		}
		return rt.Status.State == infrav1.StateReady, nil
	})
	if err != nil {
		t.Fatalf("runtime not Ready: %v; state %s, retry %+v", err, rt.Status.State, rt.Status.Retry)
	}

	id := rt.Labels[infrav1.LabelRuntimeID]
	secretKey := client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + id}
	first := &corev1.Secret{}
	if err := env.Client.Get(ctx, secretKey, first); err != nil {
		t.Fatal(err)
	}
	if len(first.Data[runtimectrl.KubeconfigKey]) == 0 {
		t.Fatalf("Secret %s holds no kubeconfig", secretKey)
	}
	err = testenv.Eventually(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, secretKey, s); err != nil {
			return false, err
		}
		return s.Annotations[gardenercluster.AnnotationIssuedAt] != first.Annotations[gardenercluster.AnnotationIssuedAt], nil
	})
	if err != nil {
		t.Fatalf("kubeconfig not rotated: %v", err)
	}

	if err := env.Client.Delete(ctx, rt); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
	})
	if err != nil {
		t.Fatalf("runtime not deleted: %v", err)
	}
	garden := gardenAdmin(t)
	gone := []struct {
		c   client.Client
		key client.ObjectKey
		obj client.Object
	}{
		{env.Client, client.ObjectKey{Namespace: rt.Namespace, Name: id}, &infrav1.GardenerCluster{}},
		{env.Client, secretKey, &corev1.Secret{}},
		{garden, client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}, &gardencorev1beta1.Shoot{}},
	}
	for _, g := range gone {
		if err := g.c.Get(ctx, g.key, g.obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after deprovisioning: %v, want it gone", g.obj, g.key, err)
		}
	}
}

// awsRuntime returns the upstream aws example as Runtime name, with a shoot and runtime id of
// its own and the landscape's default Kubernetes version (the example names one Gardener no
// longer offers).
func awsRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	objs, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := env.Client.Scheme().Convert(objs[0], rt, nil); err != nil {
		t.Fatal(err)
	}
	rt.Name, rt.Namespace, rt.Spec.Shoot.Name = name, installed.deployment.Namespace, name
	rt.Labels[infrav1.LabelShootName] = name
	rt.Labels[infrav1.LabelRuntimeID] = "rid-" + name
	rt.Spec.Shoot.Kubernetes.Version = nil
	rt.Spec.Shoot.SecretBindingName = "hyperscaler" // upstream's placeholder "hyperscaler secret" is no valid name; the simulated garden has "hyperscaler".
	return rt
}

// gardenAdmin is a client of the simulated garden as its administrator, with Gardener's types.
func gardenAdmin(t *testing.T) client.Client {
	t.Helper()
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	garden, err := client.New(sim.GardenAdminConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return garden
}
