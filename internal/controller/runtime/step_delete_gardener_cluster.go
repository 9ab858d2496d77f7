package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// deleteGardenerCluster removes the GardenerCluster and the kubeconfig Secret it kept, when they
// are the Runtime's: both are named after the runtime id, and a Runtime whose id another Runtime
// owns must not take that one's kubeconfig away. A GardenerCluster held by another Runtime leaves
// its Secret alone too; the Secret of the Runtime's own GardenerCluster goes whatever Runtime its
// labels name (they follow the GardenerCluster's only at the next rotation), and without a
// GardenerCluster, the Secret's labels decide (holdsKubeconfigSecret).
func (s steps) deleteGardenerCluster(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	gc := &infrav1.GardenerCluster{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: gardenerClusterName(rt)}, gc)
	deleted := false
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fsm.Fail(fmt.Errorf("get GardenerCluster %s: %w", gardenerClusterName(rt), err))
	case !holdsGardenerCluster(rt, gc):
		return fsm.Next(StepDeleteShoot)
	default:
		if err := client.IgnoreNotFound(s.Client.Delete(ctx, gc)); err != nil {
			return fsm.Fail(fmt.Errorf("delete GardenerCluster %s: %w", gc.Name, err))
		}
		deleted = true
	}
	secret := &corev1.Secret{}
	err = s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)}, secret)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fsm.Fail(fmt.Errorf("get kubeconfig secret %s: %w", kubeconfigSecretName(rt), err))
	case holdsKubeconfigSecret(rt, secret) || (deleted && gardenercluster.OwnsSecret(secret, gc.Name)):
		if err := client.IgnoreNotFound(s.Client.Delete(ctx, secret)); err != nil {
			return fsm.Fail(fmt.Errorf("delete kubeconfig secret %s: %w", secret.Name, err))
		}
	}
	return fsm.Next(StepDeleteShoot)
}
