package fsm_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// TestOutsideInputsRunAReadyObjectAgain changes the fingerprint of the outside inputs: a Ready
// object runs its machine again at once and stays Ready throughout, and a change in the middle
// of the machine makes it run once more after it is Ready; an unchanged fingerprint runs nothing.
func TestOutsideInputsRunAReadyObjectAgain(t *testing.T) {
	h := newHarness(t, nil)
	h.inputs = "v1"
	h.runUntil(10, ready)
	if got := h.obj.Status.ObservedInputs; got != "v1" {
		t.Fatalf("observed inputs = %q, want v1", got)
	}

	h.calls, h.out = 0, strings.Builder{}
	h.runUntil(1, func(*widget) bool { return true })
	if !strings.Contains(h.out.String(), "ran nothing") {
		t.Errorf("an unchanged fingerprint ran a step:\n%s", h.out.String())
	}

	h.inputs = "v2"
	h.runUntil(1, func(*widget) bool { return true })
	if !strings.Contains(h.out.String(), "ran Prepare") || h.obj.Status.State != fsmv1.StateReady {
		t.Errorf("a changed fingerprint did not run the machine again while Ready:\n%s", h.out.String())
	}
	// In the middle of the machine the inputs change again: it finishes, then runs once more.
	h.inputs = "v3"
	h.runUntil(10, func(o *widget) bool { return o.Status.Step.Name == "Done" })
	if got := h.obj.Status.ObservedInputs; got != "v2" {
		t.Errorf("observed inputs = %q after a change mid-machine, want v2 (the inputs it started from)", got)
	}
	h.out = strings.Builder{}
	h.runUntil(10, func(o *widget) bool { return o.Status.Step.Name == "Done" && o.Status.ObservedInputs == "v3" })
	if !strings.Contains(h.out.String(), "ran Prepare") || h.obj.Status.ObservedInputs != "v3" {
		t.Errorf("the change mid-machine was not taken:\n%s", h.out.String())
	}
}

// TestConditionsOfAnotherManagerStay runs the machine on an object that carries the conditions
// upstream's manager wrote: they are still there when it is Ready, beside the Ready condition.
func TestConditionsOfAnotherManagerStay(t *testing.T) {
	h := newHarness(t, nil)
	upstream := []string{"Provisioned", "KubeconfigReady", "OidcAndConfigMapConfigured", "KymaSystemNSCreated", "RuntimeConfigured"}
	for _, typ := range upstream {
		meta.SetStatusCondition(&h.obj.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Upstream", Message: "written by upstream"})
	}
	h.runUntil(10, ready)
	for _, typ := range upstream {
		if c := meta.FindStatusCondition(h.obj.Status.Conditions, typ); c == nil || c.Reason != "Upstream" {
			t.Errorf("condition %s = %+v, want upstream's kept", typ, c)
		}
	}
	if c := meta.FindStatusCondition(h.obj.Status.Conditions, fsmv1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
}
