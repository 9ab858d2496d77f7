package runtime

import (
	"sync"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// shootVerdicts remembers, per Runtime, the last time ApplyShoot found its shoot as the Runtime
// asks. The render and the drift check of a shoot are most of a re-check's CPU. Their inputs
// are the Runtime (its labels, annotations and spec), the shoot as Gardener has it, the
// landscape inputs and the manager's settings. While the Runtime and the shoot keep their
// resourceVersions and the landscape inputs their fingerprint, the verdict stands, and the next
// pass skips both. A change of any of them, or a new process, renders again.
type shootVerdicts struct {
	m sync.Map // types.NamespacedName -> shootVerdict
}

// shootVerdict is what a verdict was reached on.
type shootVerdict struct {
	uid                  types.UID
	runtime, shoot, with string
}

func verdictOf(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, inputs string) shootVerdict {
	return shootVerdict{uid: rt.UID, runtime: rt.ResourceVersion, shoot: shoot.ResourceVersion, with: inputs}
}

// upToDate reports whether rt's shoot was found as rt asks with the same Runtime, shoot and
// inputs. A nil shootVerdicts remembers nothing.
func (v *shootVerdicts) upToDate(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, inputs string) bool {
	if v == nil || shoot == nil || rt.ResourceVersion == "" || shoot.ResourceVersion == "" {
		return false
	}
	got, ok := v.m.Load(client.ObjectKeyFromObject(rt))
	return ok && got.(shootVerdict) == verdictOf(rt, shoot, inputs)
}

// found records that rt's shoot is as rt asks.
func (v *shootVerdicts) found(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, inputs string) {
	if v != nil && shoot != nil {
		v.m.Store(client.ObjectKeyFromObject(rt), verdictOf(rt, shoot, inputs))
	}
}

// forget drops what is remembered of rt.
func (v *shootVerdicts) forget(rt *infrav1.Runtime) {
	if v != nil {
		v.m.Delete(client.ObjectKeyFromObject(rt))
	}
}
