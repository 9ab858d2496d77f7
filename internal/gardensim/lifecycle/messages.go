package lifecycle

import (
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// reconcileTasks and deleteTasks name the flow step shown at each fifth of
// an operation's progress, as Gardener's flow reports its running tasks.
var (
	reconcileTasks = []string{
		"Deploying Shoot namespace in Seed",
		"Waiting until shoot infrastructure has been reconciled",
		"Deploying Kubernetes API server",
		"Waiting until shoot worker nodes have been reconciled",
		"Deploying managed resources for system components",
	}
	deleteTasks = []string{
		"Deleting managed resources for system components",
		"Waiting until shoot worker nodes have been deleted",
		"Destroying Kubernetes API server",
		"Waiting until shoot infrastructure has been destroyed",
		"Deleting Shoot namespace in Seed",
	}
)

// codeReasons are the provider messages behind each Gardener error code.
var codeReasons = map[gardencorev1beta1.ErrorCode]string{
	gardencorev1beta1.ErrorInfraQuotaExceeded:            "QuotaExceeded: Quota 'CPUS' exceeded. Limit: 24.0 in region europe-west1.",
	gardencorev1beta1.ErrorInfraUnauthorized:             "UnauthorizedOperation: You are not authorized to perform this operation.",
	gardencorev1beta1.ErrorInfraUnauthenticated:          "AuthFailure: AWS was not able to validate the provided access credentials.",
	gardencorev1beta1.ErrorInfraRateLimitsExceeded:       "RequestLimitExceeded: Request limit exceeded.",
	gardencorev1beta1.ErrorInfraDependencies:             "DependencyViolation: The vpc has dependencies and cannot be deleted.",
	gardencorev1beta1.ErrorRetryableInfraDependencies:    "DependencyViolation: resource is still in use, retrying.",
	gardencorev1beta1.ErrorInfraResourcesDepleted:        "ZONE_RESOURCE_POOL_EXHAUSTED: The zone does not have enough resources available to fulfill the request.",
	gardencorev1beta1.ErrorConfigurationProblem:          "InvalidParameterValue: The machine type is not supported in the selected zone.",
	gardencorev1beta1.ErrorRetryableConfigurationProblem: "the referenced secret does not exist yet.",
	gardencorev1beta1.ErrorCleanupClusterResources:       "PersistentVolumes are still present in the shoot cluster.",
	gardencorev1beta1.ErrorProblematicWebhook:            "a webhook in the shoot cluster blocks the deployment of system components.",
}

// taskAt names the flow task running at progress.
func taskAt(typ gardencorev1beta1.LastOperationType, progress int32) string {
	tasks := reconcileTasks
	if typ == gardencorev1beta1.LastOperationTypeDelete {
		tasks = deleteTasks
	}
	i := min(int(progress)*len(tasks)/100, len(tasks)-1)
	return tasks[max(i, 0)]
}

// errorDescription is the description of an operation that fails at
// progress, in the shape of a Gardener flow error.
func errorDescription(typ gardencorev1beta1.LastOperationType, progress int32, v Verdict) string {
	reason := v.Message
	if reason == "" && len(v.Codes) > 0 {
		reason = codeReasons[v.Codes[0]]
	}
	if reason == "" {
		reason = "the simulated operation failed"
	}
	flow := "Shoot cluster reconciliation"
	if typ == gardencorev1beta1.LastOperationTypeDelete {
		flow = "Shoot cluster deletion"
	}
	return fmt.Sprintf("Flow %q encountered task errors: [task %q failed: %s]", flow, taskAt(typ, progress), reason)
}
