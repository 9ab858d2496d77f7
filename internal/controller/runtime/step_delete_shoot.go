package runtime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// ConfirmDeletionAnnotation must be on a shoot before Gardener accepts its deletion.
const ConfirmDeletionAnnotation = "confirmation.gardener.cloud/deletion"

// deleteShoot confirms and requests the deletion of the runtime's shoot. A shoot that belongs to
// another Runtime (gardenOwner: one that names the same shoot, such as a Runtime that failed
// because another owns its shoot or runtime id) is not this Runtime's to delete: it is left
// alone.
func (s steps) deleteShoot(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot := &gardencorev1beta1.Shoot{}
	err := s.Garden.Get(ctx, client.ObjectKey{Namespace: s.GardenNamespace, Name: rt.Spec.Shoot.Name}, shoot)
	if apierrors.IsNotFound(err) {
		return fsm.Next(StepDeleteAuthentication)
	}
	if err != nil {
		return fsm.Fail(fmt.Errorf("get shoot %s: %w", rt.Spec.Shoot.Name, err))
	}
	if gardenOwner(shoot, rt) != "" {
		return fsm.Next(StepDeleteAuthentication)
	}
	if shoot.Annotations[ConfirmDeletionAnnotation] != "true" {
		patch := client.MergeFrom(shoot.DeepCopy())
		if shoot.Annotations == nil {
			shoot.Annotations = map[string]string{}
		}
		shoot.Annotations[ConfirmDeletionAnnotation] = "true"
		if err := s.Garden.Patch(ctx, shoot, patch); err != nil {
			return fsm.Fail(fmt.Errorf("confirm deletion of shoot %s: %w", shoot.Name, err))
		}
	}
	if err := client.IgnoreNotFound(s.Garden.Delete(ctx, shoot)); err != nil {
		return fsm.Fail(fmt.Errorf("delete shoot %s: %w", shoot.Name, err))
	}
	return fsm.Next(StepWaitForShootDeletion)
}
