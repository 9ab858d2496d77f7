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

// gardenerClusterLabels are the Runtime labels its GardenerCluster carries, as upstream's do;
// the lifecycle manager finds runtimes by them.
var gardenerClusterLabels = []string{
	infrav1.LabelInstanceID, infrav1.LabelRuntimeID, infrav1.LabelBrokerPlanID, infrav1.LabelBrokerPlanName,
	infrav1.LabelGlobalAccountID, infrav1.LabelSubaccountID, infrav1.LabelKymaName,
}

// ensureGardenerCluster creates or updates the GardenerCluster that keeps the runtime's admin
// kubeconfig in a Secret, with upstream's labels and the runtime's DNS domain.
func (s steps) ensureGardenerCluster(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = gardenerClusterName(rt), rt.Namespace
	_, err = controllerutil.CreateOrUpdate(ctx, s.Client, gc, func() error {
		if gc.Labels == nil {
			gc.Labels = map[string]string{}
		}
		for _, l := range gardenerClusterLabels {
			if v, ok := rt.Labels[l]; ok {
				gc.Labels[l] = v
			}
		}
		gc.Labels[infrav1.LabelPlatformRegion] = rt.Spec.Shoot.PlatformRegion
		gc.Labels[infrav1.LabelRegion] = rt.Spec.Shoot.Region
		gc.Labels[infrav1.LabelShootName] = rt.Spec.Shoot.Name
		gc.Labels[infrav1.LabelKymaManagedBy] = "infrastructure-manager"
		gc.Labels[infrav1.LabelKymaInternal] = "true"
		gc.Labels[LabelRuntimeName] = rt.Name
		if shoot != nil && shoot.Spec.DNS != nil && shoot.Spec.DNS.Domain != nil {
			if gc.Annotations == nil {
				gc.Annotations = map[string]string{}
			}
			gc.Annotations[infrav1.AnnotationSKRDomain] = *shoot.Spec.DNS.Domain
		}
		gc.Spec.Shoot.Name = rt.Spec.Shoot.Name
		gc.Spec.Kubeconfig.Secret = infrav1.SecretKeyRef{Name: kubeconfigSecretName(rt), Namespace: rt.Namespace, Key: KubeconfigKey}
		return nil
	})
	if err != nil {
		return fsm.Fail(fmt.Errorf("ensure GardenerCluster %s: %w", client.ObjectKeyFromObject(gc), err))
	}
	return fsm.Next(StepWaitForKubeconfig)
}
