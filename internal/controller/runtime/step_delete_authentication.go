package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// deleteAuthentication deletes the shoot's structured authentication ConfigMap once the shoot
// is gone; one that is already gone is fine, and one labelled for another Runtime (whose shoot
// has the same name, and still uses it) is left alone.
func (s steps) deleteAuthentication(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	cm := &corev1.ConfigMap{}
	err := s.Garden.Get(ctx, client.ObjectKey{Namespace: s.GardenNamespace, Name: gardener.AuthenticationConfigName(rt.Spec.Shoot.Name)}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return fsm.Next(StepRemoveFinalizer)
	case err != nil:
		return fsm.Fail(fmt.Errorf("get authentication configuration %s: %w", gardener.AuthenticationConfigName(rt.Spec.Shoot.Name), err))
	case gardenOwner(cm, rt) != "":
		return fsm.Next(StepRemoveFinalizer)
	}
	if err := client.IgnoreNotFound(s.Garden.Delete(ctx, cm)); err != nil {
		return fsm.Fail(fmt.Errorf("delete authentication configuration %s: %w", cm.Name, err))
	}
	return fsm.Next(StepRemoveFinalizer)
}
