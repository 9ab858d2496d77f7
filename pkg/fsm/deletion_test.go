package fsm_test

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestTerminatingReadySaysWhatRuns deletes an object whose first deletion step fails once and
// then succeeds: once it has moved on, the Ready condition names the step that runs now, not
// the retry that is over.
func TestTerminatingReadySaysWhatRuns(t *testing.T) {
	failures := 1
	e, err := fsm.New(fsm.Machine[*widget]{
		Name: "example", Start: "Create", Deletion: "Teardown",
		Steps: []fsm.Step[*widget]{
			{Name: "Create", Run: func(context.Context, *widget) fsm.Outcome { return fsm.Done() }},
			{Name: "Teardown", Next: []string{"Release"}, Run: func(context.Context, *widget) fsm.Outcome {
				if failures > 0 {
					failures--
					return fsm.Fail(retry.Transient("InternalError", errors.New("etcd leader changed")))
				}
				return fsm.Next("Release")
			}},
			{Name: "Release", Run: func(context.Context, *widget) fsm.Outcome {
				return fsm.Wait(0, "the finalizer goes last")
			}},
		},
	}, fsm.WithRand(func() float64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	rt := &widget{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system", Generation: 1, DeletionTimestamp: &now}}
	e.Reconcile(t.Context(), rt)
	if c := meta.FindStatusCondition(rt.Status.Conditions, fsmv1.ConditionReady); c == nil || c.Reason != fsm.ReasonRetrying {
		t.Fatalf("after the failure: Ready %+v, want Retrying", c)
	}
	rt.Status.Retry.NextRetryAt = nil // the retry is due
	e.Reconcile(t.Context(), rt)
	c := meta.FindStatusCondition(rt.Status.Conditions, fsmv1.ConditionReady)
	if rt.Status.Step.Name != "Release" || c == nil || c.Reason != fsm.ReasonDeleting || c.Message != "Step Release" {
		t.Errorf("after the retry succeeded: step %s, Ready %+v; want step Release with reason %s", rt.Status.Step.Name, c, fsm.ReasonDeleting)
	}
}
