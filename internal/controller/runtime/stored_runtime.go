package runtime

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// StoredRuntime is a Runtime as the manager's cache keeps it (the control plane's transform,
// internal/manager): its labels (ten or more from the Kyma Environment Broker) and annotations
// as intern.Pairs instead of Go maps (intern.StoredMeta), about 0.3 KB less per Runtime.
//
// Readers see a Runtime. The cache hands out copies, and a StoredRuntime's copy
// (DeepCopyObject) is the *infrav1.Runtime it was made from, so a Get or List through the
// cache gets what it got before. The informer's handlers, predicates and indexes get the
// stored form, which is a client.Object: they read names, generations, labels and annotations
// through StoredMeta's accessors, and the shoot-name index the spec (StoredRuntimeOf). Nothing
// changes a StoredRuntime after the transform made it. A read with client.UnsafeDisableDeepCopy
// would get the stored form, which is no Runtime: the cache refuses it with an error naming
// both types, so no code reads Runtimes that way.
type StoredRuntime struct {
	intern.StoredMeta

	spec   infrav1.RuntimeSpec
	status infrav1.RuntimeStatus
}

// StoreRuntime keeps rt as a StoredRuntime, which takes over what rt points to: rt must not be
// used afterwards.
func StoreRuntime(rt *infrav1.Runtime) *StoredRuntime {
	return &StoredRuntime{StoredMeta: intern.StoreMeta(rt.ObjectMeta), spec: rt.Spec, status: rt.Status}
}

// StoredRuntimeOf reads obj, an object of the Runtime informer, in the stored form: obj itself
// when the cache's transform stored it, a StoredRuntime sharing obj's parts (to be read only)
// when obj is a Runtime of a cache without the transform, and false for anything else.
func StoredRuntimeOf(obj any) (*StoredRuntime, bool) {
	switch o := obj.(type) {
	case *StoredRuntime:
		return o, o != nil
	case *infrav1.Runtime:
		if o == nil {
			return nil, false
		}
		return StoreRuntime(o), true
	}
	return nil, false
}

// runtime builds the Runtime s was made from, sharing nothing with s.
func (s *StoredRuntime) runtime() *infrav1.Runtime {
	out := &infrav1.Runtime{}
	s.CopyMetaInto(&out.ObjectMeta)
	s.spec.DeepCopyInto(&out.Spec)
	s.status.DeepCopyInto(&out.Status)
	return out
}

// DeepCopyObject implements runtime.Object: the copy of a stored Runtime is the Runtime it
// keeps.
func (s *StoredRuntime) DeepCopyObject() runtime.Object { return s.runtime() }

// Spec is the cache's own spec: a reader must not change it or anything it points to.
func (s *StoredRuntime) Spec() *infrav1.RuntimeSpec { return &s.spec }

// Status is the cache's own status: a reader must not change it or anything it points to.
func (s *StoredRuntime) Status() *infrav1.RuntimeStatus { return &s.status }

// labelOf returns the label key of o, without building a map of the labels of a StoredRuntime.
func labelOf(o client.Object, key string) string {
	if s, ok := o.(*StoredRuntime); ok {
		return s.Label(key)
	}
	return o.GetLabels()[key]
}
