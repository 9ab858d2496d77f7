package integration_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestKubeconfigSecretIsConfined points GardenerClusters at Secrets the manager may not write,
// for the shoot of a Ready runtime (so fetching the kubeconfig would succeed): one in another
// namespace (labelled as the manager labels its own, so only the namespace refuses it), one in
// the GardenerCluster's namespace without labels, and one the manager created for another
// GardenerCluster. The one outside the namespace ends Failed as a terminal error naming its
// Secret; the two others, which no Runtime holds, wait for one and are never served. Each Secret
// is exactly as it was.
func TestKubeconfigSecretIsConfined(t *testing.T) {
	ctx := t.Context()
	rt := newRuntime(t, "confined-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	const elsewhere = "tenant-confined"
	if err := env.CreateNamespace(ctx, elsewhere); err != nil {
		t.Fatal(err)
	}
	managed := func(cluster string) map[string]string {
		return map[string]string{infrav1.LabelKymaManagedBy: gardenercluster.ManagedBy, infrav1.LabelClusterName: cluster}
	}
	// A GardenerCluster no Runtime holds is not served (reason "" below): it waits, saying why.
	cases := []struct {
		cluster string
		secret  *corev1.Secret
		reason  string
	}{
		{cluster: "gc-outside", reason: gardenercluster.ReasonSecretOutsideNamespace, secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Namespace: elsewhere, Name: "kubeconfig-outside", Labels: managed("gc-outside")}}},
		{cluster: "gc-unlabelled", secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Namespace: rt.Namespace, Name: "someones-secret"}}},
		{cluster: "gc-other", secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Namespace: rt.Namespace, Name: "kubeconfig-of-another", Labels: managed("another-cluster")}}},
	}
	before := map[string]*corev1.Secret{}
	for _, c := range cases {
		c.secret.Data = map[string][]byte{runtimectrl.KubeconfigKey: []byte("not the manager's: " + c.secret.Name)}
		c.secret.Annotations = map[string]string{"owner": "someone else"}
		if err := env.Client.Create(ctx, c.secret); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), c.secret) })
		before[c.cluster] = readSecret(t, client.ObjectKeyFromObject(c.secret))

		gc := &infrav1.GardenerCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: rt.Namespace, Name: c.cluster},
			Spec: infrav1.GardenerClusterSpec{
				Shoot: infrav1.Shoot{Name: rt.Spec.Shoot.Name},
				Kubeconfig: infrav1.Kubeconfig{Secret: infrav1.SecretKeyRef{
					Namespace: c.secret.Namespace, Name: c.secret.Name, Key: runtimectrl.KubeconfigKey}},
			},
		}
		if err := env.Client.Create(ctx, gc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), gc) })
	}

	for _, c := range cases {
		gc := &infrav1.GardenerCluster{}
		key := client.ObjectKey{Namespace: rt.Namespace, Name: c.cluster}
		err := testenv.Eventually(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, key, gc); err != nil {
				return false, err
			}
			return gc.Status.State == infrav1.StateFailed || gc.Status.State == infrav1.StateReady || notHeld(gc), nil
		})
		if err != nil {
			t.Errorf("GardenerCluster %s: %v; status %+v", c.cluster, err, gc.Status)
			continue
		}
		secretName := c.secret.Namespace + "/" + c.secret.Name
		if c.reason == "" {
			if !notHeld(gc) {
				t.Errorf("GardenerCluster %s: status %+v, want it waiting for a Runtime to hold it", c.cluster, gc.Status)
			}
		} else if r := gc.Status.Retry; gc.Status.State != infrav1.StateFailed || r == nil || r.Reason != c.reason || r.Class != "Terminal" ||
			!strings.Contains(r.Message, secretName) {
			t.Errorf("GardenerCluster %s: state %s, retry record %+v; want Failed with the terminal reason %s naming %s",
				c.cluster, gc.Status.State, gc.Status.Retry, c.reason, secretName)
		}
		after := readSecret(t, client.ObjectKeyFromObject(c.secret))
		was := before[c.cluster]
		if after.ResourceVersion != was.ResourceVersion || !reflect.DeepEqual(after.Data, was.Data) ||
			!reflect.DeepEqual(after.Labels, was.Labels) || !reflect.DeepEqual(after.Annotations, was.Annotations) {
			t.Errorf("Secret %s was written: before %+v, after %+v", secretName, was, after)
		}
	}
}

// notHeld reports whether gc waits because no Runtime holds it.
func notHeld(gc *infrav1.GardenerCluster) bool {
	ready := meta.FindStatusCondition(gc.Status.Conditions, "Ready")
	return ready != nil && strings.Contains(ready.Message, "No Runtime holds this GardenerCluster")
}

// TestRuntimeIDBelongsToTheFirstRuntime creates three Runtimes with one runtime id, back to back
// and in the order of their names: the first, a second with a shoot of its own, and a third
// that names the first's shoot too. The two others carry upstream's finalizer, as upstream
// leaves the Runtimes it provisioned, so their deletion runs the deletion steps. The first ends
// Ready; the others fail at once as user errors naming it, no shoot is created for the second,
// and the GardenerCluster stays the first's. Deleting the others completes and leaves the
// first's GardenerCluster, kubeconfig Secret, shoot and authentication ConfigMap in place.
func TestRuntimeIDBelongsToTheFirstRuntime(t *testing.T) {
	ctx := t.Context()
	const id = "rid-shared"
	first, second, third := awsRuntime(t, "shared-a"), awsRuntime(t, "shared-b"), awsRuntime(t, "shared-c")
	third.Spec.Shoot.Name, third.Labels[infrav1.LabelShootName] = first.Spec.Shoot.Name, first.Spec.Shoot.Name
	for _, rt := range []*infrav1.Runtime{first, second, third} {
		rt.Labels[infrav1.LabelRuntimeID] = id
		if rt != first {
			rt.Finalizers = []string{runtimectrl.UpstreamFinalizer}
		}
		if err := env.Client.Create(ctx, rt); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteRuntime(t, rt) })
	}

	first = waitForRuntime(t, first, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	for _, rt := range []*infrav1.Runtime{second, third} {
		got := waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateFailed })
		if r := got.Status.Retry; r == nil || r.Reason != runtimectrl.ReasonRuntimeIDTaken || r.Class != "Terminal" ||
			r.Step != runtimectrl.StepInitialise || !strings.Contains(r.Message, first.Name) {
			t.Errorf("%s: retry record %+v, want a terminal %s in step %s naming %s", rt.Name, r, runtimectrl.ReasonRuntimeIDTaken, runtimectrl.StepInitialise, first.Name)
		}
		if got := readyReason(got); got != infrav1.ReasonUserActionRequired {
			t.Errorf("%s: Ready reason %s, want %s", rt.Name, got, infrav1.ReasonUserActionRequired)
		}
	}
	shootKey := func(name string) client.ObjectKey {
		return client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: name}
	}
	if err := garden.Get(ctx, shootKey(second.Spec.Shoot.Name), &gardencorev1beta1.Shoot{}); !apierrors.IsNotFound(err) {
		t.Errorf("shoot of %s: %v, want NotFound", second.Name, err)
	}
	gc, secret := assertHeldBy(t, first, nil, nil)

	for _, rt := range []*infrav1.Runtime{second, third} {
		if err := env.Client.Delete(ctx, rt); err != nil {
			t.Fatal(err)
		}
	}
	for _, rt := range []*infrav1.Runtime{second, third} {
		err := testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
		})
		if err != nil {
			t.Fatalf("%s is not deleted: %v", rt.Name, err)
		}
	}
	assertHeldBy(t, first, gc, secret)
	shoot := &gardencorev1beta1.Shoot{}
	if err := garden.Get(ctx, shootKey(first.Spec.Shoot.Name), shoot); err != nil || shoot.DeletionTimestamp != nil {
		t.Errorf("shoot of %s: %v, deletion %v; want it kept", first.Name, err, shoot.DeletionTimestamp)
	}
	cm := client.ObjectKey{Namespace: shoot.Namespace, Name: gardener.AuthenticationConfigName(first.Spec.Shoot.Name)}
	if err := garden.Get(ctx, cm, &corev1.ConfigMap{}); err != nil {
		t.Errorf("authentication ConfigMap of %s: %v, want it kept", first.Name, err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), first); err != nil || first.Status.State != infrav1.StateReady {
		t.Errorf("%s: %v, state %s after the others were deleted; want Ready", first.Name, err, first.Status.State)
	}
}

// assertHeldBy checks that the GardenerCluster and the kubeconfig Secret of rt's runtime id are
// rt's, the same objects as gc and secret when given, and returns them.
func assertHeldBy(t *testing.T, rt *infrav1.Runtime, gc *infrav1.GardenerCluster, secret *corev1.Secret) (*infrav1.GardenerCluster, *corev1.Secret) {
	t.Helper()
	id := rt.Labels[infrav1.LabelRuntimeID]
	got := &infrav1.GardenerCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: rt.Namespace, Name: id}, got); err != nil {
		t.Fatalf("GardenerCluster %s: %v", id, err)
	}
	if got.Spec.Shoot.Name != rt.Spec.Shoot.Name || got.Labels[runtimectrl.LabelRuntimeName] != rt.Name || (gc != nil && got.UID != gc.UID) {
		t.Errorf("GardenerCluster %s: shoot %s, Runtime %s, uid %s; want %s's (shoot %s)",
			id, got.Spec.Shoot.Name, got.Labels[runtimectrl.LabelRuntimeName], got.UID, rt.Name, rt.Spec.Shoot.Name)
	}
	s := readSecret(t, client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + id})
	if s.Labels[runtimectrl.LabelRuntimeName] != rt.Name || len(s.Data[runtimectrl.KubeconfigKey]) == 0 || (secret != nil && s.UID != secret.UID) {
		t.Errorf("kubeconfig Secret of %s: labels %v, uid %s, %d bytes of kubeconfig; want %s's", id, s.Labels, s.UID, len(s.Data[runtimectrl.KubeconfigKey]), rt.Name)
	}
	return got, s
}
