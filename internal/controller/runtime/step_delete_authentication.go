package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// deleteAuthentication deletes the shoot's structured authentication ConfigMap once the shoot
// is gone; one that is already gone is fine.
func (s steps) deleteAuthentication(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: s.GardenNamespace,
		Name:      gardener.AuthenticationConfigName(rt.Spec.Shoot.Name),
	}}
	if err := client.IgnoreNotFound(s.Garden.Delete(ctx, cm)); err != nil {
		return fsm.Fail(fmt.Errorf("delete authentication configuration %s: %w", cm.Name, err))
	}
	return fsm.Next(StepRemoveFinalizer)
}
