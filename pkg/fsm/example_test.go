package fsm_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Bucket is a made-up kind: a storage bucket that a controller creates and then verifies.
type Bucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            BucketStatus `json:"status,omitempty"`
}

// BucketStatus embeds the status the engine owns, inline, beside the bucket's own fields.
type BucketStatus struct {
	fsmv1.EngineStatus `json:",inline"`
	// Endpoint is where the bucket answers, once created.
	Endpoint string `json:"endpoint,omitempty"`
}

// EngineStatus makes a Bucket an fsm.Object.
func (b *Bucket) EngineStatus() *fsmv1.EngineStatus { return &b.Status.EngineStatus }

// DeepCopyInto copies b into out; controller-gen writes it for a real kind.
func (b *Bucket) DeepCopyInto(out *Bucket) {
	out.TypeMeta = b.TypeMeta
	b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	b.Status.DeepCopyInto(&out.Status)
}

// DeepCopyInto copies s into out.
func (s *BucketStatus) DeepCopyInto(out *BucketStatus) {
	*out = *s
	s.EngineStatus.DeepCopyInto(&out.EngineStatus)
}

// DeepCopyObject implements runtime.Object.
func (b *Bucket) DeepCopyObject() runtime.Object {
	out := &Bucket{}
	b.DeepCopyInto(out)
	return out
}

// A two-step machine over buckets: Create fails once with a transient error, the engine schedules
// a retry with backoff, and the retry succeeds.
func Example() {
	createFailures := 1
	machine := fsm.Machine[*Bucket]{
		Name:  "bucket",
		Start: "Create",
		Steps: []fsm.Step[*Bucket]{
			{Name: "Create", Next: []string{"Verify"}, Run: func(_ context.Context, b *Bucket) fsm.Outcome {
				if createFailures > 0 {
					createFailures--
					return fsm.Fail(retry.Transient("BackendUnavailable", errors.New("backend unavailable")))
				}
				b.Status.Endpoint = "https://" + b.Name + ".storage.example"
				return fsm.Next("Verify")
			}},
			{Name: "Verify", Run: func(context.Context, *Bucket) fsm.Outcome { return fsm.Done() }},
		},
	}
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	engine, err := fsm.New(machine, fsm.WithClock(clock), fsm.WithRand(func() float64 { return 0 }),
		fsm.WithRetryAnnotation("storage.example/retry-requested-at"))
	if err != nil {
		panic(err)
	}
	obj := &Bucket{ObjectMeta: metav1.ObjectMeta{Name: "photos", Generation: 1}}
	for obj.Status.State != fsmv1.StateReady {
		res := engine.Reconcile(context.Background(), obj)
		st := obj.Status
		if st.Retry != nil {
			fmt.Printf("%s: attempt %d failed (%s/%s), retry in %s\n", st.Retry.Step, st.Retry.Attempt, st.Retry.Class, st.Retry.Reason, res.RequeueAfter)
		} else {
			fmt.Printf("%s, step %s\n", st.State, st.Step.Name)
		}
		clock.Step(res.RequeueAfter)
	}
	ready := meta.FindStatusCondition(obj.Status.Conditions, fsmv1.ConditionReady)
	fmt.Printf("Ready=%s (%s), endpoint %s\n", ready.Status, ready.Message, obj.Status.Endpoint)
	// Output:
	// Create: attempt 1 failed (Transient/BackendUnavailable), retry in 3s
	// Pending, step Verify
	// Ready, step Done
	// Ready=True (All steps succeeded), endpoint https://photos.storage.example
}
