package lifecycle

import (
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTypes are the shoot conditions the simulator maintains.
var conditionTypes = []gardencorev1beta1.ConditionType{
	gardencorev1beta1.ShootAPIServerAvailable,
	gardencorev1beta1.ShootControlPlaneHealthy,
	gardencorev1beta1.ShootEveryNodeReady,
	gardencorev1beta1.ShootSystemComponentsHealthy,
}

// identity is what the simulated gardenlet writes about itself.
type identity struct {
	gardener gardencorev1beta1.Gardener
}

// technicalID is the shoot's namespace in the seed, as Gardener names it.
func technicalID(shoot *gardencorev1beta1.Shoot) string {
	if shoot.Status.TechnicalID != "" {
		return shoot.Status.TechnicalID
	}
	project := strings.TrimPrefix(shoot.Namespace, "garden-")
	return fmt.Sprintf("%s-%s--%s", v1beta1constants.TechnicalIDPrefix, project, shoot.Name)
}

// startOperation sets the status of a shoot whose operation typ begins.
func startOperation(shoot *gardencorev1beta1.Shoot, typ gardencorev1beta1.LastOperationType, now metav1.Time, id identity) {
	st := &shoot.Status
	last := st.LastOperation
	if st.RetryCycleStartTime == nil || st.ObservedGeneration != shoot.Generation || last == nil || last.Type != typ {
		st.RetryCycleStartTime = &now
	}
	st.TechnicalID = technicalID(shoot)
	st.UID = shoot.UID
	st.Gardener = id.gardener
	st.ObservedGeneration = shoot.Generation
	if typ != gardencorev1beta1.LastOperationTypeDelete {
		st.SeedName = shoot.Spec.SeedName
	}
	description := "Reconciliation of Shoot cluster initialized."
	if typ == gardencorev1beta1.LastOperationTypeDelete {
		description = "Deletion of Shoot cluster in progress."
	}
	st.LastOperation = &gardencorev1beta1.LastOperation{
		Type:           typ,
		State:          gardencorev1beta1.LastOperationStateProcessing,
		Description:    description,
		LastUpdateTime: now,
	}
	if len(st.Conditions) == 0 {
		for _, t := range conditionTypes {
			st.Conditions = append(st.Conditions, gardencorev1beta1.Condition{
				Type: t, Status: gardencorev1beta1.ConditionUnknown, Reason: "ConditionInitialized",
				Message:            "The condition has been initialized but its semantic check has not been performed yet.",
				LastTransitionTime: now, LastUpdateTime: now,
			})
		}
	}
}

// progressOperation moves a Processing operation to progress.
func progressOperation(shoot *gardencorev1beta1.Shoot, progress int32, now metav1.Time) {
	last := shoot.Status.LastOperation
	last.Progress = progress
	last.Description = taskAt(last.Type, progress)
	last.LastUpdateTime = now
}

// setAddresses advertises the shoot's API server at url.
func setAddresses(shoot *gardencorev1beta1.Shoot, url string) {
	shoot.Status.AdvertisedAddresses = []gardencorev1beta1.ShootAdvertisedAddress{
		{Name: v1beta1constants.AdvertisedAddressExternal, URL: url},
		{Name: v1beta1constants.AdvertisedAddressInternal, URL: url},
	}
}

// succeedOperation ends the running operation successfully.
func succeedOperation(shoot *gardencorev1beta1.Shoot, now metav1.Time) {
	st := &shoot.Status
	typ := st.LastOperation.Type
	description := "Shoot cluster has been successfully reconciled."
	if typ == gardencorev1beta1.LastOperationTypeDelete {
		description = "Shoot cluster has been successfully deleted."
	} else {
		setConditions(shoot, gardencorev1beta1.ConditionTrue, now)
	}
	st.RetryCycleStartTime = nil
	st.LastErrors = nil
	st.LastOperation = &gardencorev1beta1.LastOperation{
		Type:           typ,
		State:          gardencorev1beta1.LastOperationStateSucceeded,
		Progress:       100,
		Description:    description,
		LastUpdateTime: now,
	}
}

// failOperation ends the running operation in Error or Failed, as v says.
func failOperation(shoot *gardencorev1beta1.Shoot, v Verdict, now metav1.Time) {
	last := shoot.Status.LastOperation
	description := errorDescription(last.Type, last.Progress, v)
	shoot.Status.LastErrors = []gardencorev1beta1.LastError{{
		Description:    description,
		TaskID:         ptrTo(taskAt(last.Type, last.Progress)),
		Codes:          v.Codes,
		LastUpdateTime: &now,
	}}
	last.State = gardencorev1beta1.LastOperationStateFailed
	last.Description = description
	if v.Outcome == OutcomeError {
		last.State = gardencorev1beta1.LastOperationStateError
		last.Description += " Operation will be retried."
	} else {
		shoot.Status.RetryCycleStartTime = nil
	}
	last.LastUpdateTime = now
}

// setConditions gives every maintained condition the status s.
func setConditions(shoot *gardencorev1beta1.Shoot, s gardencorev1beta1.ConditionStatus, now metav1.Time) {
	for i := range shoot.Status.Conditions {
		c := &shoot.Status.Conditions[i]
		if c.Status != s {
			c.LastTransitionTime = now
		}
		c.Status, c.LastUpdateTime = s, now
		c.Reason, c.Message = healthyReason(c.Type)
	}
}

func healthyReason(t gardencorev1beta1.ConditionType) (string, string) {
	switch t {
	case gardencorev1beta1.ShootAPIServerAvailable:
		return "HealthzRequestSucceeded", "API server /healthz endpoint responded with success status code."
	case gardencorev1beta1.ShootControlPlaneHealthy:
		return "ControlPlaneRunning", "All control plane components are healthy."
	case gardencorev1beta1.ShootEveryNodeReady:
		return "EveryNodeReady", "All nodes are ready."
	default:
		return "SystemComponentsRunning", "All system components are healthy."
	}
}

func ptrTo[T any](v T) *T { return &v }
