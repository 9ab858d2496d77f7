package runtime

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// StoredRuntime is a Runtime as the manager's cache keeps it (the control plane's transform,
// internal/manager): its labels (ten or more from the Kyma Environment Broker) and annotations
// as intern.Pairs instead of Go maps. Labels or annotations without entries read as none
// (nil), as the API server serves them.
//
// Readers see a Runtime. The cache hands out copies, and a StoredRuntime's copy
// (DeepCopyObject) is the *infrav1.Runtime it was made from, so a Get or List through the
// cache gets what it got before. The informer's handlers, predicates and indexes get the
// stored form, which is a client.Object: they read names, generations, labels and annotations
// through the accessors below, and the shoot-name index the spec (StoredRuntimeOf). Nothing
// changes a StoredRuntime after the transform made it. A read with client.UnsafeDisableDeepCopy
// would get the stored form, which is no Runtime: the cache refuses it with an error naming
// both types, so no code reads Runtimes that way.
type StoredRuntime struct {
	// ObjectMeta is the Runtime's metadata without labels and annotations.
	metav1.ObjectMeta
	labels, annotations intern.Pairs

	spec   infrav1.RuntimeSpec
	status infrav1.RuntimeStatus
}

// StoreRuntime keeps rt as a StoredRuntime, which takes over what rt points to: rt must not be
// used afterwards.
func StoreRuntime(rt *infrav1.Runtime) *StoredRuntime {
	s := &StoredRuntime{
		ObjectMeta:  rt.ObjectMeta,
		labels:      intern.PairsOf(rt.Labels),
		annotations: intern.PairsOf(rt.Annotations),
		spec:        rt.Spec,
		status:      rt.Status,
	}
	s.Labels, s.Annotations = nil, nil
	return s
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
	s.DeepCopyInto(&out.ObjectMeta) // ObjectMeta's: a StoredRuntime has no DeepCopyInto of its own
	out.Labels, out.Annotations = s.labels.Map(), s.annotations.Map()
	s.spec.DeepCopyInto(&out.Spec)
	s.status.DeepCopyInto(&out.Status)
	return out
}

// DeepCopyObject implements runtime.Object: the copy of a stored Runtime is the Runtime it
// keeps.
func (s *StoredRuntime) DeepCopyObject() runtime.Object { return s.runtime() }

// GetObjectKind implements runtime.Object. The cache sets the kind on the copies it hands out.
func (s *StoredRuntime) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetLabels returns a new map of the labels (predicates, indexes and label selectors read
// them). It hides ObjectMeta's, which holds none.
func (s *StoredRuntime) GetLabels() map[string]string { return s.labels.Map() }

// GetAnnotations returns a new map of the annotations. It hides ObjectMeta's, which holds none.
func (s *StoredRuntime) GetAnnotations() map[string]string { return s.annotations.Map() }

// SetLabels keeps m's entries as the labels.
func (s *StoredRuntime) SetLabels(m map[string]string) { s.labels = intern.PairsOf(m) }

// SetAnnotations keeps m's entries as the annotations.
func (s *StoredRuntime) SetAnnotations(m map[string]string) { s.annotations = intern.PairsOf(m) }

// Label returns the value of the label key, "" when there is none, without building a map.
func (s *StoredRuntime) Label(key string) string {
	v, _ := s.labels.Get(key)
	return v
}

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
