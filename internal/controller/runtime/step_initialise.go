package runtime

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// initialise checks the labels the other steps rely on and adds the finalizer, so a Runtime is
// never deleted before its shoot. A Runtime adopted from upstream has its finalizer replaced by
// this controller's in the same update, so it is never without one.
func (s steps) initialise(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	for _, l := range infrav1.RequiredRuntimeLabels {
		if rt.Labels[l] == "" {
			return fsm.Fail(retry.Terminal("MissingLabel", fmt.Errorf("label %s is missing", l)))
		}
	}
	added := controllerutil.AddFinalizer(rt, Finalizer)
	if controllerutil.RemoveFinalizer(rt, UpstreamFinalizer) || added {
		if err := s.Client.Update(ctx, rt); err != nil {
			return fsm.Fail(fmt.Errorf("add finalizer: %w", err))
		}
	}
	return fsm.Next(StepApplyAuthentication)
}
