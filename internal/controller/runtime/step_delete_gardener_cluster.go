package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// deleteGardenerCluster removes the GardenerCluster and the kubeconfig Secret it kept.
func (s steps) deleteGardenerCluster(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = gardenerClusterName(rt), rt.Namespace
	if err := client.IgnoreNotFound(s.Client.Delete(ctx, gc)); err != nil {
		return fsm.Fail(fmt.Errorf("delete GardenerCluster %s: %w", gc.Name, err))
	}
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = kubeconfigSecretName(rt), rt.Namespace
	if err := client.IgnoreNotFound(s.Client.Delete(ctx, secret)); err != nil {
		return fsm.Fail(fmt.Errorf("delete kubeconfig secret %s: %w", secret.Name, err))
	}
	return fsm.Next(StepDeleteShoot)
}
