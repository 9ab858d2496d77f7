package gardensim_test

import (
	"context"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
)

// TestFailedOperationRetriedByAnnotation checks that a Failed Create with a
// real Gardener error code waits for gardener.cloud/operation=retry, which
// restarts it and is removed.
func TestFailedOperationRetriedByAnnotation(t *testing.T) {
	const name = "retry-quota"
	setLifecycleRules(t, lifecycle.Rule{
		Name: "quota", Shoot: "retry-*", Operations: []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate},
		Outcome: lifecycle.OutcomeFailed, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded},
		Count: 1, PerShoot: true,
	})
	if err := garden.Create(t.Context(), newShoot(name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { confirmAndDelete(t, name) })

	failed := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateFailed)
	if errs := failed.Status.LastErrors; len(errs) != 1 || len(errs[0].Codes) != 1 || errs[0].Codes[0] != gardencorev1beta1.ErrorInfraQuotaExceeded {
		t.Fatalf("lastErrors = %+v, want one with %s", errs, gardencorev1beta1.ErrorInfraQuotaExceeded)
	}

	shoot := &gardencorev1beta1.Shoot{}
	if err := garden.Get(t.Context(), client.ObjectKeyFromObject(failed), shoot); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	metav1.SetMetaDataAnnotation(&shoot.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.ShootOperationRetry)
	if err := garden.Patch(t.Context(), shoot, patch); err != nil {
		t.Fatalf("annotate retry: %v", err)
	}
	done := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
	if _, ok := done.Annotations[v1beta1constants.GardenerOperation]; ok {
		t.Errorf("retry annotation was not removed: %v", done.Annotations)
	}
	if len(done.Status.LastErrors) != 0 {
		t.Errorf("lastErrors after success = %+v", done.Status.LastErrors)
	}
}

// TestErrorOperationRetriedBySimulator checks that an operation ending in
// Error is retried without anyone's help, as Gardener retries retryable
// errors.
func TestErrorOperationRetriedBySimulator(t *testing.T) {
	const name = "error-then-hang"
	create := []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate}
	setLifecycleRules(t,
		lifecycle.Rule{
			Name: "transient", Shoot: name, Operations: create, Outcome: lifecycle.OutcomeError, Count: 1, Progress: 20,
			Codes:      []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorRetryableInfraDependencies},
			RetryAfter: &metav1.Duration{Duration: 500 * time.Millisecond},
		},
		lifecycle.Rule{Name: "then-hang", Shoot: name, Operations: create, Outcome: lifecycle.OutcomeHang},
	)
	if err := garden.Create(t.Context(), newShoot(name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { confirmAndDelete(t, name) })

	errored := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateError)
	if errored.Status.LastOperation.Progress != 20 {
		t.Errorf("progress at error = %d, want 20", errored.Status.LastOperation.Progress)
	}
	eventually(t, 30*time.Second, "retry after Error", func(ctx context.Context) (bool, error) {
		s := &gardencorev1beta1.Shoot{}
		if err := direct.Get(ctx, client.ObjectKeyFromObject(errored), s); err != nil {
			return false, err
		}
		last := s.Status.LastOperation
		return last.State == gardencorev1beta1.LastOperationStateProcessing && last.LastUpdateTime.After(errored.Status.LastOperation.LastUpdateTime.Time), nil
	})
}
