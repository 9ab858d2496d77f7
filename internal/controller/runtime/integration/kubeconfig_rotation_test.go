package integration_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestKubeconfigRotation: the stored kubeconfig is replaced before it expires; while rotation
// fails the old one stays in the Secret, and rotation resumes when Gardener answers again.
func TestKubeconfigRotation(t *testing.T) {
	rt := newRuntime(t, "rotate-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	key := client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]}
	first := readSecret(t, key)

	rotated := waitForSecret(t, key, "a rotation", func(s *corev1.Secret) bool {
		return s.Annotations[gardenercluster.AnnotationIssuedAt] != first.Annotations[gardenercluster.AnnotationIssuedAt]
	})
	if bytes.Equal(rotated.Data[runtimectrl.KubeconfigKey], first.Data[runtimectrl.KubeconfigKey]) {
		t.Error("the rotation stored the same kubeconfig again")
	}
	expires, err := time.Parse(time.RFC3339, first.Annotations[gardenercluster.AnnotationExpiresAt])
	if err != nil {
		t.Fatal(err)
	}
	if !time.Now().Before(expires) {
		t.Errorf("the first kubeconfig expired (%s) before it was rotated", expires)
	}

	if err := sim.SetFaults([]fault.Rule{{Name: "no-kubeconfig", Match: fault.Match{Verbs: []string{"adminkubeconfig"}, Name: rt.Spec.Shoot.Name},
		Fault: fault.Fault{Type: fault.TypeStatus, Code: 503}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	kept := waitForFailedRotations(t, rt, 2)
	if len(kept.Data[runtimectrl.KubeconfigKey]) == 0 {
		t.Fatal("a failing rotation emptied the Secret")
	}
	later := waitForFailedRotations(t, rt, 3)
	if !bytes.Equal(kept.Data[runtimectrl.KubeconfigKey], later.Data[runtimectrl.KubeconfigKey]) {
		t.Error("the kubeconfig changed while every rotation failed")
	}
	runtimeClient(t, rt) // the kept kubeconfig still reaches the cluster

	if err := sim.SetFaults(nil); err != nil {
		t.Fatal(err)
	}
	waitForSecret(t, key, "rotation after Gardener recovered", func(s *corev1.Secret) bool {
		return s.Annotations[gardenercluster.AnnotationIssuedAt] != kept.Annotations[gardenercluster.AnnotationIssuedAt]
	})
}

// waitForFailedRotations waits until the GardenerCluster has failed at least n rotations in a
// row and returns the Secret as it is then.
func waitForFailedRotations(t *testing.T, rt *infrav1.Runtime, n int32) *corev1.Secret {
	t.Helper()
	gc := &infrav1.GardenerCluster{}
	err := testenv.Eventually(t.Context(), time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: rt.Labels[infrav1.LabelRuntimeID]}, gc); err != nil {
			return false, err
		}
		return gc.Status.Retry != nil && gc.Status.Retry.Attempt >= n, nil
	})
	if err != nil {
		t.Fatalf("the failing rotation was not retried %d times: %v; status %+v", n, err, gc.Status)
	}
	return readSecret(t, client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]})
}

func readSecret(t *testing.T, key client.ObjectKey) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), key, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func waitForSecret(t *testing.T, key client.ObjectKey, what string, cond func(*corev1.Secret) bool) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	err := testenv.Eventually(t.Context(), time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, s); err != nil {
			return false, err
		}
		return cond(s), nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return s
}
