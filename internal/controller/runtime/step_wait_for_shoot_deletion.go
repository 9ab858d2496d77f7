package runtime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// waitForShootDeletion waits until the shoot is gone. A failed Delete operation is reported to
// the engine, classified by Gardener's error codes: one that may pass is retried under the
// step's policy, one that needs a person (the provider refused the credentials, say) fails the
// Runtime at once. Either way the Runtime keeps its finalizer, and stays visible, until the
// shoot is gone.
func (s steps) waitForShootDeletion(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot := &gardencorev1beta1.Shoot{}
	err := s.Garden.Get(ctx, client.ObjectKey{Namespace: s.GardenNamespace, Name: rt.Spec.Shoot.Name}, shoot)
	if apierrors.IsNotFound(err) {
		setCondition(rt, infrav1.ConditionDeprovisioned, true, "ShootDeleted", "Shoot "+rt.Spec.Shoot.Name+" is gone")
		return fsm.Next(StepDeleteAuthentication)
	}
	if err != nil {
		return fsm.Fail(fmt.Errorf("get shoot %s: %w", rt.Spec.Shoot.Name, err))
	}
	rt.Status.Gardener = gardener.MirrorStatus(shoot)
	mirrorUpstreamStatus(rt, shoot)
	if obs := gardener.Observe(shoot); obs.Err != nil && obs.Operation == string(gardencorev1beta1.LastOperationTypeDelete) {
		return fsm.Fail(obs.Err)
	}
	return fsm.Wait(s.poll(StepWaitForShootDeletion, shoot), "shoot "+shoot.Name+" is being deleted")
}
