package runtime

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// setCondition sets one of the upstream condition types of a Runtime.
func setCondition(rt *infrav1.Runtime, typ string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&rt.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: rt.Generation,
	})
}

// mirrorUpstreamStatus keeps the shoot's last operation and errors in the status fields
// upstream's manager writes, for the components that read them there.
func mirrorUpstreamStatus(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot) {
	if shoot == nil {
		return
	}
	rt.Status.ShootLastOperation = shoot.Status.LastOperation.DeepCopy()
	errs := shoot.Status.LastErrors
	if len(errs) > 16 {
		errs = errs[:16]
	}
	rt.Status.ShootLastErrors = nil
	for i := range errs {
		rt.Status.ShootLastErrors = append(rt.Status.ShootLastErrors, *errs[i].DeepCopy())
	}
}
