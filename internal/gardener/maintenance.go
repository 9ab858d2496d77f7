package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"
)

// maintenance lets Gardener's maintenance update versions when the landscape allows it, and
// gives production runtimes their region's maintenance window. A shoot keeps the window it has
// when the landscape names none, so a re-apply never moves it.
func (b *shootBuilder) maintenance() *gardencorev1beta1.Maintenance {
	out := &gardencorev1beta1.Maintenance{
		AutoUpdate: &gardencorev1beta1.MaintenanceAutoUpdate{
			KubernetesVersion:   b.opts.KubernetesAutoUpdate,
			MachineImageVersion: ptr.To(b.opts.MachineImageAutoUpdate),
		},
	}
	if w, ok := b.opts.MaintenanceWindows[b.rt.Spec.Shoot.Region]; ok && b.rt.Spec.Shoot.Purpose == string(gardencorev1beta1.ShootPurposeProduction) {
		out.TimeWindow = &w
	} else if b.current != nil && b.current.Spec.Maintenance != nil && b.current.Spec.Maintenance.TimeWindow != nil {
		out.TimeWindow = b.current.Spec.Maintenance.TimeWindow.DeepCopy()
	}
	return out
}
