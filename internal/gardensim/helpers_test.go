package gardensim_test

import (
	"context"
	"testing"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
)

// newShoot returns an aws shoot that Gardener admits, on Kubernetes
// 1.30.5 so that tests can upgrade it.
func newShoot(name string) *gardencorev1beta1.Shoot {
	return newProviderShoot("aws", name)
}

// newProviderShoot returns a shoot of the provider that Gardener admits,
// on Kubernetes 1.30.5.
func newProviderShoot(provider, name string) *gardencorev1beta1.Shoot {
	shoot := admissiontest.ValidShoot(provider, name, namespace)
	shoot.Spec.Kubernetes.Version = "1.30.5"
	return shoot
}

// eventually polls cond until it holds, failing the test after timeout. It
// also works in cleanups, when the test's context is already cancelled.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.WithoutCancel(t.Context()), 100*time.Millisecond, timeout, true, cond)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitForOperation waits until the shoot's last operation has the given
// type and state, and returns the shoot as the direct client reads it.
func waitForOperation(t *testing.T, name string, typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState) *gardencorev1beta1.Shoot {
	t.Helper()
	shoot := &gardencorev1beta1.Shoot{}
	eventually(t, 60*time.Second, "wait for "+string(typ)+" "+string(state)+" of "+name, func(ctx context.Context) (bool, error) {
		if err := direct.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, shoot); err != nil {
			return false, err
		}
		last := shoot.Status.LastOperation
		return last != nil && last.Type == typ && last.State == state, nil
	})
	return shoot
}

// confirmAndDelete deletes a shoot the way Gardener requires and waits
// until it is gone.
func confirmAndDelete(t *testing.T, name string) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	shoot := &gardencorev1beta1.Shoot{}
	if err := direct.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, shoot); err != nil {
		if apierrors.IsNotFound(err) {
			return
		}
		t.Fatal(err)
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	metav1.SetMetaDataAnnotation(&shoot.ObjectMeta, v1beta1constants.ConfirmationDeletion, "true")
	if err := direct.Patch(ctx, shoot, patch); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err := direct.Delete(ctx, shoot); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	waitGone(t, name)
}

// waitGone waits until the shoot no longer exists.
func waitGone(t *testing.T, name string) {
	t.Helper()
	eventually(t, 60*time.Second, "wait for "+name+" to disappear", func(ctx context.Context) (bool, error) {
		err := direct.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &gardencorev1beta1.Shoot{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// adminKubeconfig requests an admin kubeconfig as the manager does.
func adminKubeconfig(ctx context.Context, name string, seconds int64) (*authenticationv1alpha1.AdminKubeconfigRequest, error) {
	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	req := &authenticationv1alpha1.AdminKubeconfigRequest{
		Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: ptr.To(seconds)},
	}
	err := garden.SubResource("adminkubeconfig").Create(ctx, shoot, req)
	return req, err
}

// shootClient builds a client from an admin kubeconfig.
func shootClient(t *testing.T, kubeconfig []byte) client.Client {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: coreScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func coreScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// setLifecycleRules installs lifecycle rules for the test and removes them
// afterwards.
func setLifecycleRules(t *testing.T, rules ...lifecycle.Rule) {
	t.Helper()
	if err := sim.SetLifecycleRules(rules); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetLifecycleRules(nil) })
}
