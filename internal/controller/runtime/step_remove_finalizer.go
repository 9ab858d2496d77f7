package runtime

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// removeFinalizer lets the Runtime go, once nothing it created is left; upstream's finalizer,
// on a Runtime deleted before it was adopted, goes with it.
func (s steps) removeFinalizer(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	upstream := controllerutil.RemoveFinalizer(rt, UpstreamFinalizer)
	if controllerutil.RemoveFinalizer(rt, Finalizer) || upstream {
		if err := client.IgnoreNotFound(writeFinalizers(ctx, s.Client, rt)); err != nil {
			return fsm.Fail(fmt.Errorf("remove finalizer: %w", err))
		}
	}
	if s.upstreamAdminsGone != nil {
		s.upstreamAdminsGone.Delete(client.ObjectKeyFromObject(rt))
	}
	s.verdicts.forget(rt)
	return fsm.Done()
}
