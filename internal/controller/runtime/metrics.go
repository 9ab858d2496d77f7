package runtime

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// runtimeSeries are the series the engine keeps about each Runtime. The alert rules
// (config/prometheus/rules.yaml), the dashboard and the runbooks read them under these names and
// labels.
var runtimeSeries = fsm.ObjectSeries{
	Namespace: "infrastructure_manager",
	Failed: fsm.Series{Name: "runtime_failed",
		Help: "1 while a runtime is Failed; the series exists only then."},
	Retrying: fsm.Series{Name: "runtime_retrying",
		Help: "The attempt number while a runtime's step is being retried; the series exists only then."},
	StepEntered: fsm.Series{Name: "runtime_step_entered_timestamp_seconds",
		Help: "When a runtime that is not Ready entered its current step (unix seconds)."},
	StepDeadline: fsm.Series{Name: "runtime_step_deadline_seconds",
		Help: "How long the current step of a runtime that is not Ready may wait, in seconds; absent for steps without a deadline."},
	Labels:     []string{"runtime_id", "runtime_name", "shoot"},
	StepLabels: []string{"runtime_id"},
}

// runtimeMetrics returns the series of runtimeSeries, registered with controller-runtime's
// registry, which the manager serves, on first use.
var runtimeMetrics = sync.OnceValues(func() (*fsm.ObjectMetrics, error) {
	return fsm.NewObjectMetrics(ctrlmetrics.Registry, runtimeSeries)
})

// runtimeLabels identifies a Runtime in its series: its runtime id, its name and its shoot.
func runtimeLabels(o client.Object) prometheus.Labels {
	labels := prometheus.Labels{"runtime_id": o.GetLabels()[infrav1.LabelRuntimeID], "runtime_name": o.GetName()}
	if rt, ok := o.(*infrav1.Runtime); ok {
		labels["shoot"] = rt.Spec.Shoot.Name
	}
	return labels
}

// runtimeLogValues names the Runtime in every line the engine and the steps log.
func runtimeLogValues(o client.Object) []any {
	return []any{"runtimeID", o.GetLabels()[infrav1.LabelRuntimeID]}
}
