package runtime

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// runtimeLabels identifies a Runtime in its series: its runtime id, its name and its shoot.
func runtimeLabels(o client.Object) prometheus.Labels {
	labels := prometheus.Labels{metrics.LabelRuntimeID: labelOf(o, infrav1.LabelRuntimeID), metrics.LabelRuntimeName: o.GetName()}
	switch rt := o.(type) {
	case *infrav1.Runtime:
		labels[metrics.LabelShoot] = rt.Spec.Shoot.Name
	case *StoredRuntime:
		labels[metrics.LabelShoot] = rt.spec.Shoot.Name
	}
	return labels
}

// runtimeLogValues names the Runtime in every line the engine and the steps log.
func runtimeLogValues(o client.Object) []any {
	return []any{"runtimeID", o.GetLabels()[infrav1.LabelRuntimeID]}
}
