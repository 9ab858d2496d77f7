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
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// waitForKubeconfig waits for the GardenerCluster controller to store the admin kubeconfig. A
// Secret of that name that the GardenerCluster controller did not create (which it refuses to
// write) is a terminal error: its kubeconfig is not the runtime's, and the controller must not
// configure whatever cluster it reaches.
func (s steps) waitForKubeconfig(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	secret := &corev1.Secret{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return fsm.Wait(s.Poll, "the kubeconfig Secret "+kubeconfigSecretName(rt)+" does not exist yet")
	case err != nil:
		return fsm.Fail(fmt.Errorf("get kubeconfig secret: %w", err))
	case !gardenercluster.OwnsSecret(secret, gardenerClusterName(rt)):
		return fsm.Fail(retry.Terminal(gardenercluster.ReasonSecretNotOwned, fmt.Errorf(
			"the Secret %s/%s is not the kubeconfig Secret the manager keeps for GardenerCluster %s (labels %v): its kubeconfig is not used",
			secret.Namespace, secret.Name, gardenerClusterName(rt), secret.Labels)))
	case len(secret.Data[KubeconfigKey]) == 0:
		return fsm.Wait(s.Poll, "the kubeconfig Secret "+kubeconfigSecretName(rt)+" is empty")
	}
	setCondition(rt, infrav1.ConditionKubeconfigReady, true, "KubeconfigStored", "Secret "+secret.Name+" holds the admin kubeconfig")
	return fsm.Next(StepConfigureOIDC)
}
