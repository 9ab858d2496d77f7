package runtime

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// KubeconfigKey is the key of the kubeconfig in its Secret, as upstream names it.
const KubeconfigKey = "config"

// ensureGardenerCluster creates or updates the GardenerCluster that keeps the runtime's admin
// kubeconfig in a Secret.
func (s steps) ensureGardenerCluster(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = gardenerClusterName(rt), rt.Namespace
	_, err := controllerutil.CreateOrUpdate(ctx, s.Client, gc, func() error {
		if gc.Labels == nil {
			gc.Labels = map[string]string{}
		}
		gc.Labels[infrav1.LabelRuntimeID] = rt.Labels[infrav1.LabelRuntimeID]
		gc.Labels[LabelRuntimeName] = rt.Name
		gc.Spec.Shoot.Name = rt.Spec.Shoot.Name
		gc.Spec.Kubeconfig.Secret = infrav1.SecretKeyRef{Name: kubeconfigSecretName(rt), Namespace: rt.Namespace, Key: KubeconfigKey}
		return nil
	})
	if err != nil {
		return fsm.Fail(fmt.Errorf("ensure GardenerCluster %s: %w", client.ObjectKeyFromObject(gc), err))
	}
	return fsm.Next(StepWaitForKubeconfig)
}
