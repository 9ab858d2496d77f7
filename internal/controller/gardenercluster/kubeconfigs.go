package gardenercluster

import (
	"context"
	"fmt"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kubeconfigs issues admin kubeconfigs of shoots: the one thing the controller asks of Gardener.
type Kubeconfigs interface {
	// ShootUID returns the uid of the shoot as it exists now, to bind a kubeconfig to it. A
	// missing shoot is a NotFound error.
	ShootUID(ctx context.Context, shoot string) (types.UID, error)
	// AdminKubeconfig returns a new admin kubeconfig of the shoot, asked to live for lifetime,
	// and when it expires.
	AdminKubeconfig(ctx context.Context, shoot string, lifetime time.Duration) ([]byte, time.Time, error)
}

// Garden is what GardenKubeconfigs needs of the garden client: shoots to read, and their
// adminkubeconfig sub-resource.
type Garden interface {
	client.Reader
	client.SubResourceClientConstructor
}

// GardenKubeconfigs asks Gardener for them with an AdminKubeconfigRequest, the shoots'
// adminkubeconfig sub-resource.
type GardenKubeconfigs struct {
	// Garden reaches the Gardener project. The manager's reads shoots from its watch cache.
	Garden Garden
	// Namespace is the project namespace, garden-<project>.
	Namespace string
}

// ShootUID implements Kubeconfigs.
func (g GardenKubeconfigs) ShootUID(ctx context.Context, shootName string) (types.UID, error) {
	shoot := &gardencorev1beta1.Shoot{}
	if err := g.Garden.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: shootName}, shoot); err != nil {
		return "", fmt.Errorf("get shoot %s: %w", shootName, err)
	}
	return shoot.UID, nil
}

// AdminKubeconfig implements Kubeconfigs.
func (g GardenKubeconfigs) AdminKubeconfig(ctx context.Context, shootName string, lifetime time.Duration) ([]byte, time.Time, error) {
	shoot := &gardencorev1beta1.Shoot{}
	shoot.Name, shoot.Namespace = shootName, g.Namespace
	req := &authenticationv1alpha1.AdminKubeconfigRequest{
		Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: ptr.To(int64(lifetime.Seconds()))},
	}
	if err := g.Garden.SubResource("adminkubeconfig").Create(ctx, shoot, req); err != nil {
		return nil, time.Time{}, fmt.Errorf("request admin kubeconfig of shoot %s: %w", shootName, err)
	}
	if len(req.Status.Kubeconfig) == 0 {
		return nil, time.Time{}, fmt.Errorf("admin kubeconfig of shoot %s: the reply holds no kubeconfig", shootName)
	}
	return req.Status.Kubeconfig, req.Status.ExpirationTimestamp.Time, nil
}
