package integration_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// createOnly limits a lifecycle rule to the Create operation, so the shoot can still be deleted.
var createOnly = []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate}

// newRuntime creates a Runtime from the AWS fixture with its own name, shoot and runtime id.
func newRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	return newRuntimeWith(t, name, func(*infrav1.Runtime) {})
}

// newRuntimeWith creates a Runtime like newRuntime, changed by mutate before it is created.
func newRuntimeWith(t *testing.T, name string, mutate func(*infrav1.Runtime)) *infrav1.Runtime {
	t.Helper()
	rt := awsRuntime(t, name)
	mutate(rt)
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRuntime(t, rt) })
	return rt
}

// awsRuntime returns the upstream aws example as Runtime name (see upstreamExample).
func awsRuntime(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	return upstreamExample(t, "aws", name)
}

// upstreamExample returns upstream's example Runtime of a provider as Runtime name, with its own
// shoot name and runtime id (rid-<name>), an offered Kubernetes version and the garden's
// secret binding; it is not created.
func upstreamExample(t *testing.T, provider, name string) *infrav1.Runtime {
	t.Helper()
	objs, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", provider+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := env.Client.Scheme().Convert(objs[0], rt, nil); err != nil {
		t.Fatal(err)
	}
	rt.Name, rt.Spec.Shoot.Name = name, name
	rt.Labels[infrav1.LabelShootName] = name
	rt.Labels[infrav1.LabelRuntimeID] = "rid-" + name
	withOfferedVersion(rt)
	withGardenBinding(rt)
	return rt
}

// withGardenBinding names the simulated garden's secret binding: upstream's placeholder
// "hyperscaler secret" is no valid name, and gardener-apiserver refuses a shoot whose binding
// does not exist.
func withGardenBinding(rt *infrav1.Runtime) { rt.Spec.Shoot.SecretBindingName = "hyperscaler" }

// withOfferedVersion clears the Kubernetes version the upstream examples name, 1.28.7, which
// current Gardener no longer offers: the simulator refuses it as Gardener does (a test below
// checks that), so the runtime gets the landscape's default version instead.
func withOfferedVersion(rt *infrav1.Runtime) {
	rt.Spec.Shoot.Kubernetes.Version = nil
}

// deleteRuntime deletes a Runtime and waits until it is gone, so tests leave nothing behind.
func deleteRuntime(t *testing.T, rt *infrav1.Runtime) {
	ctx := context.Background()
	if err := client.IgnoreNotFound(env.Client.Delete(ctx, rt)); err != nil {
		t.Errorf("delete %s: %v", rt.Name, err)
		return
	}
	err := testenv.Eventually(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})
		return client.IgnoreNotFound(err) == nil && err != nil, nil
	})
	if err != nil {
		t.Errorf("runtime %s was not deleted: %v", rt.Name, err)
	}
}

// setLifecycle installs simulator lifecycle rules for the test and removes them after it.
func setLifecycle(t *testing.T, rules ...lifecycle.Rule) {
	t.Helper()
	if err := sim.SetLifecycleRules(rules); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetLifecycleRules(nil) })
}

func readyReason(rt *infrav1.Runtime) string {
	if c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// TestUnauthorizedIsAUserErrorWithoutRetries: ERR_INFRA_UNAUTHORIZED needs the user; the
// runtime fails at once, spends no attempts, and Gardener is not asked to retry.
func TestUnauthorizedIsAUserErrorWithoutRetries(t *testing.T) {
	setLifecycle(t, lifecycle.Rule{Name: "unauthorized", Shoot: "unauth-*", Outcome: lifecycle.OutcomeFailed, Operations: createOnly,
		Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraUnauthorized}})
	rt := newRuntime(t, "unauth-1")
	rt = waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateFailed
	})
	if got := readyReason(rt); got != infrav1.ReasonUserActionRequired {
		t.Errorf("Ready reason: got %s, want %s", got, infrav1.ReasonUserActionRequired)
	}
	if rt.Status.Retry == nil || rt.Status.Retry.Attempt != 0 || rt.Status.Retry.Reason != "InfraUnauthorized" {
		t.Errorf("retry record: got %+v, want no attempts and reason InfraUnauthorized", rt.Status.Retry)
	}
	if rt.Status.Gardener == nil || len(rt.Status.Gardener.LastErrors) == 0 {
		t.Errorf("the shoot's lastErrors are not mirrored: %+v", rt.Status.Gardener)
	}
}

// TestQuotaExceededIsRetriedThenExhausted: ERR_INFRA_QUOTA_EXCEEDED that does not clear makes
// the manager ask Gardener to retry, a bounded number of times, then RetriesExhausted.
func TestQuotaExceededIsRetriedThenExhausted(t *testing.T) {
	setLifecycle(t, lifecycle.Rule{Name: "quota", Shoot: "quota-*", Outcome: lifecycle.OutcomeFailed, Operations: createOnly,
		Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}})
	rt := newRuntime(t, "quota-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Failed", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateFailed
	})
	if got := readyReason(rt); got != infrav1.ReasonRetriesExhausted {
		t.Errorf("Ready reason: got %s, want %s (status %+v)", got, infrav1.ReasonRetriesExhausted, rt.Status.Retry)
	}
	if rt.Status.Retry == nil || rt.Status.Retry.Attempt != testAttempts || rt.Status.Retry.Reason != "InfraQuotaExceeded" {
		t.Errorf("retry record: got %+v, want %d attempts with reason InfraQuotaExceeded", rt.Status.Retry, testAttempts)
	}
}

// TestQuotaThatClearsEndsReady: two failed operations, then the quota is there.
func TestQuotaThatClearsEndsReady(t *testing.T) {
	setLifecycle(t, lifecycle.Rule{Name: "quota-clears", Shoot: "clears-*", Outcome: lifecycle.OutcomeFailed, Operations: createOnly,
		Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}, Count: 2, PerShoot: true})
	rt := newRuntime(t, "clears-1")
	rt = waitForRuntime(t, rt, 2*time.Minute, "Ready", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady
	})
	if rt.Status.Retry != nil {
		t.Errorf("a Ready runtime kept its retry record: %+v", rt.Status.Retry)
	}
}
