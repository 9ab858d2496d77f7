package runtime

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// ReasonShootMissing is the reason of the terminal failure of a provisioned runtime whose shoot
// is gone although the manager did not delete it.
const ReasonShootMissing = "ShootMissing"

// provisioned reports whether rt's shoot existed once: the runtime was Ready, or upstream's
// manager reported it provisioned before this one took the Runtime over.
func provisioned(rt *infrav1.Runtime) bool {
	return rt.Status.ProvisioningCompleted || meta.IsStatusConditionTrue(rt.Status.Conditions, infrav1.ConditionProvisioned)
}

// shootMissing decides what to do about rt's shoot, which does not exist. A runtime that was
// never provisioned creates it: nil. A provisioned one fails for good, because a shoot deleted
// outside the manager is an incident, and recreating it would give the runtime an empty cluster
// under its old name. The failure records the manual retry pending when the shoot went
// missing (status.shootMissing); a newer manual retry lets the shoot be created again (nil),
// on every pass until the shoot is seen again (shootFound), so that a pass that finds the new
// shoot not yet in the cache creates it again rather than failing anew. See docs/adr for the
// decision.
func shootMissing(rt *infrav1.Runtime) error {
	if !provisioned(rt) {
		return nil
	}
	m := rt.Status.ShootMissing
	if m == nil {
		rt.Status.ShootMissing = &infrav1.ShootMissingStatus{RetryRequestedAt: rt.Status.RetryRequestedAt}
	} else if m.RetryRequestedAt != rt.Status.RetryRequestedAt {
		return nil
	}
	return retry.Terminal(ReasonShootMissing, fmt.Errorf(
		"shoot %s of this provisioned runtime is gone and the manager did not delete it; it is not recreated on its own: set the annotation %s to a new time to recreate it",
		rt.Spec.Shoot.Name, infrav1.RetryRequestedAtAnnotation))
}

// shootFound forgets that rt's shoot went missing, once it exists again.
func shootFound(rt *infrav1.Runtime) {
	rt.Status.ShootMissing = nil
}
