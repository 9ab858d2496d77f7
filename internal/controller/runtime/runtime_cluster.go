package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// runtimeCluster connects to the runtime's own cluster with the admin kubeconfig that the
// GardenerCluster controller keeps in the runtime's kubeconfig Secret.
func (s steps) runtimeCluster(ctx context.Context, rt *infrav1.Runtime) (client.Client, error) {
	secret := &corev1.Secret{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)}, secret); err != nil {
		return nil, fmt.Errorf("get kubeconfig secret: %w", err)
	}
	c, err := s.RuntimeClient(ctx, secret.Data[KubeconfigKey])
	if err != nil {
		return nil, fmt.Errorf("connect to runtime cluster: %w", err)
	}
	return c, nil
}
