package manager

import (
	"encoding/json"
	"testing"
	"unsafe"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// TestControlPlaneTransformKeepsRepeatedStringsOnce checks that the cache of the manager's
// namespace keeps one copy of what the Runtimes of a fleet repeat, and drops managedFields.
func TestControlPlaneTransformKeepsRepeatedStringsOnce(t *testing.T) {
	rt := &infrav1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "r-1", Labels: map[string]string{infrav1.LabelRuntimeID: "r-1"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	rt.Spec.Shoot.Region = "eu-central-1"
	rt.Status.Conditions = []metav1.Condition{{Type: "Provisioned", Status: metav1.ConditionTrue, Reason: "ShootReady", Message: "Shoot c-1 is reconciled"}}
	rt.Status.State, rt.Status.ObservedInputs = fsmv1.StateReady, "acl:4f2a"
	rt.Status.Step = &fsmv1.StepStatus{Name: "WaitForShoot"}
	rt.Status.ShootLastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile,
		State: gardencorev1beta1.LastOperationStateSucceeded, Description: "Shoot cluster has been successfully reconciled."}
	rt.Status.Gardener = &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Reconcile", State: "Succeeded", Description: "reconciled"}}
	data, err := json.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	var copies [2]*infrav1.Runtime
	for i := range copies {
		decoded := &infrav1.Runtime{}
		if err := json.Unmarshal(data, decoded); err != nil {
			t.Fatal(err)
		}
		kept, err := ControlPlaneTransform(decoded)
		if err != nil {
			t.Fatal(err)
		}
		// What a read through the cache gets: a copy of what the cache keeps, which shares its
		// strings.
		copies[i] = kept.(runtime.Object).DeepCopyObject().(*infrav1.Runtime)
	}
	a, b := copies[0], copies[1]
	if a.ManagedFields != nil {
		t.Error("managedFields are kept")
	}
	var keyA, keyB string
	for k := range a.Labels {
		keyA = k
	}
	for k := range b.Labels {
		keyB = k
	}
	for path, pair := range map[string][2]string{
		"label key":         {keyA, keyB},
		"spec.shoot.region": {a.Spec.Shoot.Region, b.Spec.Shoot.Region},
		"condition type":    {a.Status.Conditions[0].Type, b.Status.Conditions[0].Type},
		"condition reason":  {a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason},
		"name":              {a.Name, b.Name},
		"label value":       {a.Labels[infrav1.LabelRuntimeID], b.Labels[infrav1.LabelRuntimeID]},
		"state":             {string(a.Status.State), string(b.Status.State)},
		"observed inputs":   {a.Status.ObservedInputs, b.Status.ObservedInputs},
		"step":              {a.Status.Step.Name, b.Status.Step.Name},
		"shoot operation":   {a.Status.ShootLastOperation.Description, b.Status.ShootLastOperation.Description},
		"Gardener's state":  {a.Status.Gardener.LastOperation.State, b.Status.Gardener.LastOperation.State},
	} {
		if pair[0] != pair[1] || unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
			t.Errorf("%s: each copy keeps its own %q", path, pair[0])
		}
	}
	if a.Status.Conditions[0].Message != rt.Status.Conditions[0].Message {
		t.Errorf("condition message changed: %q", a.Status.Conditions[0].Message)
	}
}
