package integration_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
)

// TestDowngradeIsKeptAndSaid asks a Ready runtime for an older Kubernetes version than its
// shoot runs: Gardener refuses downgrades, so the shoot keeps its version, the runtime stays
// Ready, and its VersionsAsRequested condition says what was kept.
func TestDowngradeIsKeptAndSaid(t *testing.T) {
	rt := newRuntimeWith(t, "downgrade-1", func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.34.1") })
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", readyAt(1))
	expectVersionsCondition(t, rt, metav1.ConditionTrue, runtimectrl.ReasonVersionsAsRequested)

	rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.33.4")
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready after asking for a downgrade", readyAt(rt.Generation))
	if got := getShoot(t, rt.Spec.Shoot.Name).Spec.Kubernetes.Version; got != "1.34.1" {
		t.Errorf("shoot Kubernetes version: got %s, want 1.34.1 kept", got)
	}
	c := expectVersionsCondition(t, rt, metav1.ConditionFalse, runtimectrl.ReasonDowngradeRefused)
	if want := "Kubernetes 1.34.1 kept instead of the requested 1.33.4"; c != nil && !strings.Contains(c.Message, want) {
		t.Errorf("VersionsAsRequested message %q does not say %q", c.Message, want)
	}
}

// TestUnofferedVersionFailsWithGardenersMessage creates the upstream aws example as it is: it
// names Kubernetes 1.28.7, which the cloud profile no longer offers. Gardener's admission
// refuses the shoot; the runtime fails at once as a user error with Gardener's message, and
// spends no retries on it.
func TestUnofferedVersionFailsWithGardenersMessage(t *testing.T) {
	rt := newRuntimeWith(t, "unoffered-1", func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.28.7") })
	rt = waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateFailed
	})
	if got := readyReason(rt); got != infrav1.ReasonUserActionRequired {
		t.Errorf("Ready reason: got %s, want %s", got, infrav1.ReasonUserActionRequired)
	}
	r := rt.Status.Retry
	if r == nil || r.Step != runtimectrl.StepApplyShoot || r.Reason != runtimectrl.ReasonShootRefused || r.Attempt != 0 {
		t.Fatalf("retry record: got %+v, want step %s, reason %s, no attempts", r, runtimectrl.StepApplyShoot, runtimectrl.ReasonShootRefused)
	}
	if !strings.Contains(r.Message, "1.28.7") {
		t.Errorf("retry message %q does not carry Gardener's message about 1.28.7", r.Message)
	}
}

// expectVersionsCondition checks the VersionsAsRequested condition and returns it.
func expectVersionsCondition(t *testing.T, rt *infrav1.Runtime, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionVersionsAsRequested)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Errorf("condition %s = %+v, want %s/%s", infrav1.ConditionVersionsAsRequested, c, status, reason)
	}
	return c
}
