package integration_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestShootNameBelongsToTheFirstRuntime: a second Runtime, with a runtime id of its own, that
// names a Ready runtime's shoot fails at once with ShootNameTaken naming the first. The first's
// shoot, authentication ConfigMap and cluster role bindings stay byte for byte as they were, and
// deleting the second leaves the first's shoot in place.
func TestShootNameBelongsToTheFirstRuntime(t *testing.T) {
	ctx := t.Context()
	first := newRuntime(t, "named-a")
	first = waitForRuntime(t, first, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	shootKey := client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: first.Spec.Shoot.Name}
	cmKey := client.ObjectKey{Namespace: shootKey.Namespace, Name: gardener.AuthenticationConfigName(first.Spec.Shoot.Name)}
	shootBefore, cmBefore := &gardencorev1beta1.Shoot{}, &corev1.ConfigMap{}
	if err := garden.Get(ctx, shootKey, shootBefore); err != nil {
		t.Fatal(err)
	}
	if err := garden.Get(ctx, cmKey, cmBefore); err != nil {
		t.Fatal(err)
	}
	bindingsBefore := &rbacv1.ClusterRoleBindingList{}
	if err := runtimeClient(t, first).List(ctx, bindingsBefore); err != nil {
		t.Fatal(err)
	}

	second := newRuntimeWith(t, "named-b", func(rt *infrav1.Runtime) {
		rt.Spec.Shoot.Name, rt.Labels[infrav1.LabelShootName] = first.Spec.Shoot.Name, first.Spec.Shoot.Name
		rt.Spec.Security.Administrators = []string{"intruder@example.com"}
	})
	got := waitForRuntime(t, second, time.Minute, "Failed", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed })
	if r := got.Status.Retry; r == nil || r.Reason != runtimectrl.ReasonShootNameTaken || r.Class != "Terminal" ||
		r.Step != runtimectrl.StepInitialise || !strings.Contains(r.Message, first.Name) {
		t.Errorf("%s: retry record %+v, want a terminal %s in step %s naming %s", second.Name, r, runtimectrl.ReasonShootNameTaken, runtimectrl.StepInitialise, first.Name)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: second.Namespace, Name: second.Labels[infrav1.LabelRuntimeID]}, &infrav1.GardenerCluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("GardenerCluster of %s: %v, want none", second.Name, err)
	}
	unchanged := func(when string) {
		t.Helper()
		shoot, cm := &gardencorev1beta1.Shoot{}, &corev1.ConfigMap{}
		if err := garden.Get(ctx, shootKey, shoot); err != nil || shoot.DeletionTimestamp != nil {
			t.Fatalf("%s: shoot of %s: %v, deletion %v; want it kept", when, first.Name, err, shoot.DeletionTimestamp)
		}
		if shoot.ResourceVersion != shootBefore.ResourceVersion && !reflect.DeepEqual(shoot.Spec, shootBefore.Spec) {
			t.Errorf("%s: the shoot's spec changed", when)
		}
		if !reflect.DeepEqual(shoot.Labels, shootBefore.Labels) || !reflect.DeepEqual(shoot.Annotations, shootBefore.Annotations) {
			t.Errorf("%s: the shoot's metadata changed: labels %v, annotations %v", when, shoot.Labels, shoot.Annotations)
		}
		if err := garden.Get(ctx, cmKey, cm); err != nil || cm.ResourceVersion != cmBefore.ResourceVersion {
			t.Errorf("%s: authentication ConfigMap: %v, resourceVersion %s, want %s", when, err, cm.ResourceVersion, cmBefore.ResourceVersion)
		}
		bindings := &rbacv1.ClusterRoleBindingList{}
		if err := runtimeClient(t, first).List(ctx, bindings); err != nil {
			t.Fatal(err)
		}
		if names(bindings.Items) != names(bindingsBefore.Items) {
			t.Errorf("%s: cluster role bindings %s, want %s", when, names(bindings.Items), names(bindingsBefore.Items))
		}
	}
	unchanged("after the second Runtime failed")

	if err := env.Client.Delete(ctx, second); err != nil {
		t.Fatal(err)
	}
	err := testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(second), &infrav1.Runtime{})), nil
	})
	if err != nil {
		t.Fatalf("%s is not deleted: %v", second.Name, err)
	}
	unchanged("after the second Runtime was deleted")
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), first); err != nil || first.Status.State != infrav1.StateReady {
		t.Errorf("%s: %v, state %s; want Ready", first.Name, err, first.Status.State)
	}
}

// names lists the bindings' names and resourceVersions, to compare two lists.
func names(bindings []rbacv1.ClusterRoleBinding) string {
	out := make([]string, 0, len(bindings))
	for _, b := range bindings {
		out = append(out, b.Name+"@"+b.ResourceVersion)
	}
	return strings.Join(out, ",")
}
