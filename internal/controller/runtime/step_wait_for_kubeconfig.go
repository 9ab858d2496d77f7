package runtime

import (
	"cmp"
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// waitForKubeconfig waits for the GardenerCluster controller to store the admin kubeconfig. A
// Secret of that name that the GardenerCluster controller did not create (which it refuses to
// write) is a terminal error: its kubeconfig is not the runtime's, and the controller must not
// configure whatever cluster it reaches. A kubeconfig issued for another shoot (another name, or
// an earlier shoot of the same name) is never used: the step asks the GardenerCluster
// controller to rotate it at once, and waits.
func (s steps) waitForKubeconfig(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	secret, err := getKubeconfigSecret(ctx, s.Kubeconfigs, client.ObjectKey{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)})
	switch {
	case apierrors.IsNotFound(err):
		return fsm.Wait(s.poll(StepWaitForKubeconfig, nil), "the kubeconfig Secret "+kubeconfigSecretName(rt)+" does not exist yet")
	case err != nil:
		return fsm.Fail(fmt.Errorf("get kubeconfig secret: %w", err))
	case !secret.OwnedBy(gardenerClusterName(rt)):
		return fsm.Fail(retry.Terminal(gardenercluster.ReasonSecretNotOwned, fmt.Errorf(
			"the Secret %s/%s is not the kubeconfig Secret the manager keeps for GardenerCluster %s (labels %s=%q, %s=%q): its kubeconfig is not used",
			secret.Namespace, secret.Name, gardenerClusterName(rt), infrav1.LabelKymaManagedBy, secret.ManagedBy, infrav1.LabelClusterName, secret.ClusterName)))
	case secret.Empty:
		return fsm.Wait(s.poll(StepWaitForKubeconfig, nil), "the kubeconfig Secret "+kubeconfigSecretName(rt)+" is empty")
	}
	if wrong, err := s.issuedForAnother(ctx, rt, secret); err != nil || wrong != "" {
		if err != nil {
			return fsm.Fail(err)
		}
		return s.rotateNow(ctx, rt, wrong)
	}
	setCondition(rt, infrav1.ConditionKubeconfigReady, true, "KubeconfigStored", "Secret "+secret.Name+" holds the admin kubeconfig")
	return fsm.Next(StepConfigureOIDC)
}

// issuedForAnother says for which other shoot the kubeconfig in secret was issued, "" when it is
// for rt's shoot as it exists now (read from the shoot cache). A kubeconfig upstream's manager
// issued records only the shoot's name.
func (s steps) issuedForAnother(ctx context.Context, rt *infrav1.Runtime, secret *KubeconfigSecret) (string, error) {
	name, uid := secret.Shoot, secret.ShootUID
	if name != rt.Spec.Shoot.Name {
		return "shoot " + cmp.Or(name, "(unknown)"), nil
	}
	if uid == "" {
		return "", nil
	}
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil || shoot == nil {
		return "", err
	}
	if shoot.UID != uid {
		return "an earlier shoot " + name + " (uid " + string(uid) + ")", nil
	}
	return "", nil
}

// rotateNow asks the GardenerCluster controller to replace the kubeconfig issued for wrong, the
// shoot it names, and waits for it.
func (s steps) rotateNow(ctx context.Context, rt *infrav1.Runtime, wrong string) fsm.Outcome {
	gc := &infrav1.GardenerCluster{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: gardenerClusterName(rt)}, gc); err != nil {
		return fsm.Fail(fmt.Errorf("get GardenerCluster %s: %w", gardenerClusterName(rt), err))
	}
	if _, asked := gc.Annotations[infrav1.AnnotationForceKubeconfigRotation]; !asked {
		patch := client.MergeFrom(gc.DeepCopy())
		if gc.Annotations == nil {
			gc.Annotations = map[string]string{}
		}
		gc.Annotations[infrav1.AnnotationForceKubeconfigRotation] = "true"
		if err := s.Client.Patch(ctx, gc, patch); err != nil {
			return fsm.Fail(fmt.Errorf("ask GardenerCluster %s for a new kubeconfig: %w", gc.Name, err))
		}
	}
	return fsm.Wait(s.poll(StepWaitForKubeconfig, nil), "the kubeconfig in Secret "+kubeconfigSecretName(rt)+" was issued for "+wrong+", not for shoot "+rt.Spec.Shoot.Name+": it is not used, and a new one is on its way")
}
