package gardenercluster

import (
	"context"
	"fmt"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kubeconfigs issues admin kubeconfigs of shoots: the one thing the controller asks of Gardener.
type Kubeconfigs interface {
	// Shoot tells of the shoot as it exists now: its uid, to bind a kubeconfig to it, and
	// whether Gardener can issue one. A missing shoot is a NotFound error.
	Shoot(ctx context.Context, shoot string) (ShootState, error)
	// AdminKubeconfig returns a new admin kubeconfig of the shoot, asked to live for lifetime,
	// and when it expires.
	AdminKubeconfig(ctx context.Context, shoot string, lifetime time.Duration) ([]byte, time.Time, error)
}

// ShootState is what the controller needs to know of a shoot before it asks for a kubeconfig.
type ShootState struct {
	// UID of the shoot.
	UID types.UID
	// Addressed tells whether the shoot advertises an address of its API server (external,
	// internal or unmanaged), without which Gardener refuses to issue a kubeconfig: a shoot that
	// is being created again under the same name has none until its API server runs.
	Addressed bool
}

// Addressed reports whether shoot advertises an API server address Gardener issues admin
// kubeconfigs for.
func Addressed(shoot *gardencorev1beta1.Shoot) bool {
	for _, a := range shoot.Status.AdvertisedAddresses {
		switch a.Name {
		case v1beta1constants.AdvertisedAddressExternal, v1beta1constants.AdvertisedAddressInternal, v1beta1constants.AdvertisedAddressUnmanaged:
			return true
		}
	}
	return false
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

// Shoot implements Kubeconfigs.
func (g GardenKubeconfigs) Shoot(ctx context.Context, shootName string) (ShootState, error) {
	shoot := &gardencorev1beta1.Shoot{}
	if err := g.Garden.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: shootName}, shoot); err != nil {
		return ShootState{}, fmt.Errorf("get shoot %s: %w", shootName, err)
	}
	return ShootState{UID: shoot.UID, Addressed: Addressed(shoot)}, nil
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
