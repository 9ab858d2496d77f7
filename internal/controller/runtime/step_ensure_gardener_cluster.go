package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
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
// kubeconfig in a Secret, with upstream's labels and the runtime's DNS domain. A GardenerCluster
// that another Runtime with the same runtime id holds is not updated: that is a terminal error
// (a GardenerCluster whose Runtime is gone is taken over).
func (s steps) ensureGardenerCluster(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	claimants, err := s.runtimeIDClaimants(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = gardenerClusterName(rt), rt.Namespace
	_, err = controllerutil.CreateOrUpdate(ctx, s.Client, gc, func() error {
		if gc.ResourceVersion != "" {
			if holder := gardenerClusterHolder(gc, claimants); holder != nil && holder.Name != rt.Name {
				return runtimeIDTaken(rt, holder)
			}
		}
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
		gc.Labels[infrav1.LabelKymaManagedBy] = gardenercluster.ManagedBy
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

// holdsGardenerCluster reports whether gc, the GardenerCluster of rt's runtime id, is rt's. This
// controller labels the GardenerClusters it writes with the name of their Runtime; upstream's
// carry no such label and are held by the Runtime of their shoot.
func holdsGardenerCluster(rt *infrav1.Runtime, gc *infrav1.GardenerCluster) bool {
	if name, ok := gc.Labels[LabelRuntimeName]; ok {
		return name == rt.Name
	}
	return gc.Spec.Shoot.Name == rt.Spec.Shoot.Name
}

// holdsKubeconfigSecret reports whether secret, the kubeconfig Secret of rt's runtime id, is
// rt's: one the GardenerCluster controller created (gardenercluster.OwnsSecret) for rt. The
// Secret carries its GardenerCluster's labels, so the Runtime's name when this controller made
// the GardenerCluster, and only the shoot's name when upstream did.
func holdsKubeconfigSecret(rt *infrav1.Runtime, secret *corev1.Secret) bool {
	if !gardenercluster.OwnsSecret(secret, gardenerClusterName(rt)) {
		return false
	}
	if name, ok := secret.Labels[LabelRuntimeName]; ok {
		return name == rt.Name
	}
	shoot, ok := secret.Labels[infrav1.LabelShootName]
	return !ok || shoot == rt.Spec.Shoot.Name
}
