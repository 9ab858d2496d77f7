package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestRuntimeSeriesAreTheShippedOnes fails one Runtime's step for good and another's for now,
// and reads the series the alert rules, the dashboard and the runbooks read: their names, help
// texts and labels must stay as shipped.
func TestRuntimeSeriesAreTheShippedOnes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := fsm.New(fsm.Machine[*infrav1.Runtime]{
		Name: runtimectrl.ControllerName, Start: runtimectrl.StepWaitForShoot,
		Steps: []fsm.Step[*infrav1.Runtime]{{Name: runtimectrl.StepWaitForShoot, Deadline: 30 * time.Minute,
			Run: func(_ context.Context, rt *infrav1.Runtime) fsm.Outcome {
				if rt.Name == "failed" {
					return fsm.Fail(retry.Terminal("InfraUnauthorized", errors.New("denied")))
				}
				return fsm.Fail(retry.Transient("InfraQuotaExceeded", errors.New("quota")))
			}}},
	}, fsm.WithObjectMetrics(m.Runtimes, runtimectrl.RuntimeLabels),
		fsm.WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"failed", "retrying"} {
		rt := &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: name, Generation: 1,
			Labels: map[string]string{infrav1.LabelRuntimeID: "id-" + name}}}
		rt.Spec.Shoot.Name = "shoot-" + name
		engine.Reconcile(t.Context(), rt)
	}
	want := `# HELP infrastructure_manager_runtime_failed 1 while a runtime is Failed; the series exists only then.
# TYPE infrastructure_manager_runtime_failed gauge
infrastructure_manager_runtime_failed{class="Terminal",reason="InfraUnauthorized",runtime_id="id-failed",runtime_name="failed",shoot="shoot-failed",step="WaitForShoot"} 1
# HELP infrastructure_manager_runtime_retrying The attempt number while a runtime's step is being retried; the series exists only then.
# TYPE infrastructure_manager_runtime_retrying gauge
infrastructure_manager_runtime_retrying{reason="InfraQuotaExceeded",runtime_id="id-retrying",runtime_name="retrying",shoot="shoot-retrying",step="WaitForShoot"} 1
# HELP infrastructure_manager_runtime_step_deadline_seconds How long the current step of a runtime that is not Ready may wait, in seconds; absent for steps without a deadline.
# TYPE infrastructure_manager_runtime_step_deadline_seconds gauge
infrastructure_manager_runtime_step_deadline_seconds{runtime_id="id-failed",step="WaitForShoot"} 1800
infrastructure_manager_runtime_step_deadline_seconds{runtime_id="id-retrying",step="WaitForShoot"} 1800
# HELP infrastructure_manager_runtime_step_entered_timestamp_seconds When a runtime that is not Ready entered its current step (unix seconds).
# TYPE infrastructure_manager_runtime_step_entered_timestamp_seconds gauge
infrastructure_manager_runtime_step_entered_timestamp_seconds{runtime_id="id-failed",step="WaitForShoot"} 1.7672256e+09
infrastructure_manager_runtime_step_entered_timestamp_seconds{runtime_id="id-retrying",step="WaitForShoot"} 1.7672256e+09
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "infrastructure_manager_runtime_failed", "infrastructure_manager_runtime_retrying",
		"infrastructure_manager_runtime_step_deadline_seconds", "infrastructure_manager_runtime_step_entered_timestamp_seconds"); err != nil {
		t.Error(err)
	}
}
