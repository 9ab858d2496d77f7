package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// TrimShoot is the garden cache's transform for shoots: it keeps of a shoot what the render sets
// and the steps and the shoot watch read, so a fleet's cached shoots hold no more. It drops the managedFields and,
// of the status, all but the last operation, the last errors, the observed generation and the
// advertised addresses (the GardenerCluster controller asks for a kubeconfig only once the API
// server has one): the health conditions, constraints, credentials rotation and networks that
// Gardener keeps there are no step's business. Of the spec it drops the Kubernetes settings
// Gardener defaults and the render neither sets nor reads (dropUnrendered). The settings of the
// spec and the last operation's words repeat across a fleet: each is kept once (package
// intern). Anything else passes as it is. It trims shoot in place and returns it.
func TrimShoot(shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.Shoot {
	shoot.ManagedFields = nil
	dropUnrendered(&shoot.Spec.Kubernetes)
	shoot.Status = gardencorev1beta1.ShootStatus{
		LastOperation:       shoot.Status.LastOperation,
		LastErrors:          shoot.Status.LastErrors,
		ObservedGeneration:  shoot.Status.ObservedGeneration,
		AdvertisedAddresses: shoot.Status.AdvertisedAddresses,
	}
	intern.Strings(&shoot.Spec)
	if op := shoot.Status.LastOperation; op != nil {
		op.Description = intern.String(op.Description)
		op.Type = gardencorev1beta1.LastOperationType(intern.String(string(op.Type)))
		op.State = gardencorev1beta1.LastOperationState(intern.String(string(op.State)))
	}
	for i := range shoot.Status.AdvertisedAddresses {
		a := &shoot.Status.AdvertisedAddresses[i]
		a.Name = intern.String(a.Name)
	}
	return shoot
}

// dropUnrendered drops the Kubernetes settings of a shoot that Gardener defaults and the render
// neither sets nor reads. They are about a third of a defaulted shoot's spec. The drift check
// compares only what the render sets, so a cached shoot without them plans the same writes
// (TestTrimmedShootPlansTheSame). The render sets the version, the API server's audit policy,
// service account tokens, feature gates, runtime config and authentication, and the kubelet's
// feature gates; those stay.
func dropUnrendered(k *gardencorev1beta1.Kubernetes) {
	k.ClusterAutoscaler = nil
	k.KubeControllerManager = nil
	k.KubeScheduler = nil
	k.KubeProxy = nil
	k.VerticalPodAutoscaler = nil
	k.ETCD = nil
	if k.Kubelet != nil {
		// The struct stays, so a drift report names the same path as on the whole shoot.
		k.Kubelet = &gardencorev1beta1.KubeletConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: k.Kubelet.FeatureGates}}
	}
	if api := k.KubeAPIServer; api != nil {
		api.Requests = nil
		api.EventTTL = nil
		api.Logging = nil
		api.DefaultNotReadyTolerationSeconds = nil
		api.DefaultUnreachableTolerationSeconds = nil
		api.EncryptionConfig = nil
	}
}
