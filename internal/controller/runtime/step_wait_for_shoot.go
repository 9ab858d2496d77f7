package runtime

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// waitForShoot waits until Gardener has reconciled the current shoot spec. A failed operation
// that may pass (quota, rate limits, dependencies) is retried by asking Gardener to retry it, on
// the step's backoff: the first failure is reported to the engine, and each retry run annotates
// the shoot with gardener.cloud/operation=retry and waits for the new operation.
func (s steps) waitForShoot(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot := &gardencorev1beta1.Shoot{}
	err := s.Garden.Get(ctx, client.ObjectKey{Namespace: s.GardenNamespace, Name: rt.Spec.Shoot.Name}, shoot)
	if apierrors.IsNotFound(err) {
		// The shoot cache has not seen the shoot just applied yet. The watch wakes the step, or
		// the poll without a watch. A shoot deleted behind the manager's back ends in
		// StepTimedOut at the deadline.
		return fsm.Wait(s.poll(StepWaitForShoot, nil), "shoot "+rt.Spec.Shoot.Name+" is not visible yet")
	}
	if err != nil {
		return fsm.Fail(fmt.Errorf("get shoot %s: %w", rt.Spec.Shoot.Name, err))
	}
	shootFound(rt)
	rt.Status.Gardener = gardener.MirrorStatus(shoot)
	mirrorUpstreamStatus(rt, shoot)
	obs := gardener.Observe(shoot)
	switch {
	case obs.Done:
		setCondition(rt, infrav1.ConditionProvisioned, true, "ShootReady", "Shoot "+shoot.Name+" is reconciled")
		return fsm.Next(StepEnsureGardenerCluster)
	case obs.Err == nil:
		return fsm.Wait(s.poll(StepWaitForShoot, shoot), obs.Waiting)
	case !obs.NeedsGardenerRetry:
		return fsm.Fail(obs.Err)
	case shoot.Annotations[v1beta1constants.GardenerOperation] == v1beta1constants.ShootOperationRetry:
		return fsm.Wait(s.poll(StepWaitForShoot, shoot), "Gardener has not yet picked up the retry of the failed operation")
	case !fsm.IsRetry(ctx):
		// First sight of this failure: the engine counts it and decides when to retry.
		return fsm.Fail(obs.Err)
	}
	patch := client.MergeFrom(shoot.DeepCopy())
	if shoot.Annotations == nil {
		shoot.Annotations = map[string]string{}
	}
	shoot.Annotations[v1beta1constants.GardenerOperation] = v1beta1constants.ShootOperationRetry
	if err := s.Garden.Patch(ctx, shoot, patch); err != nil {
		return fsm.Fail(fmt.Errorf("request retry of shoot %s: %w", shoot.Name, err))
	}
	return fsm.Wait(s.poll(StepWaitForShoot, shoot), "Gardener retries the failed operation")
}

// poll is how soon the waiting step looks again at what it waits for: Polls when set, else
// PollInterval. shoot is the Runtime's shoot as the step last read it, nil when none.
func (s steps) poll(step string, shoot *gardencorev1beta1.Shoot) time.Duration {
	if s.Polls != nil {
		return s.Polls(step, shoot)
	}
	return s.PollInterval
}
