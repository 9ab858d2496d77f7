package manager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// storedCluster is a GardenerCluster as the cache of the manager's namespace keeps it: its
// labels (thirteen on the manager's GardenerClusters) and annotations as intern.Pairs instead
// of Go maps, about 500 bytes less per GardenerCluster. Labels or annotations without entries
// read as none (nil), as the API server serves them.
//
// Readers see a GardenerCluster. The cache hands out copies, and a storedCluster's copy
// (DeepCopyObject) is the *infrav1.GardenerCluster it was made from, so a Get or List through
// the cache gets what it got before. Event handlers of the informer get the stored form, which
// is a client.Object: the handlers of both controllers read only its name, namespace,
// generation, labels and annotations, through the accessors below. The fleet metrics read it
// as it is (cachedFleet). Nothing changes a storedCluster after the transform made it. A read
// with client.UnsafeDisableDeepCopy would get the stored form, which is no GardenerCluster: the
// cache refuses it with an error naming both types; no code reads GardenerClusters that way.
type storedCluster struct {
	// ObjectMeta is the GardenerCluster's metadata without labels and annotations.
	metav1.ObjectMeta
	labels, annotations intern.Pairs

	spec   infrav1.GardenerClusterSpec
	status infrav1.GardenerClusterStatus
}

// storeCluster keeps gc as a storedCluster, which takes over what gc points to: gc must not be
// used afterwards.
func storeCluster(gc *infrav1.GardenerCluster) *storedCluster {
	s := &storedCluster{
		ObjectMeta:  gc.ObjectMeta,
		labels:      intern.PairsOf(gc.Labels),
		annotations: intern.PairsOf(gc.Annotations),
		spec:        gc.Spec,
		status:      gc.Status,
	}
	s.Labels, s.Annotations = nil, nil
	return s
}

// cluster builds the GardenerCluster s was made from, sharing nothing with s.
func (s *storedCluster) cluster() *infrav1.GardenerCluster {
	out := &infrav1.GardenerCluster{}
	s.DeepCopyInto(&out.ObjectMeta) // ObjectMeta's: a storedCluster has no DeepCopyInto of its own
	out.Labels, out.Annotations = s.labels.Map(), s.annotations.Map()
	s.spec.DeepCopyInto(&out.Spec)
	s.status.DeepCopyInto(&out.Status)
	return out
}

// DeepCopyObject implements runtime.Object: the copy of a stored GardenerCluster is the
// GardenerCluster it keeps.
func (s *storedCluster) DeepCopyObject() runtime.Object { return s.cluster() }

// GetObjectKind implements runtime.Object. The cache sets the kind on the copies it hands out.
func (s *storedCluster) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetLabels and GetAnnotations return new maps of the labels and annotations (predicates and
// label selectors read them); SetLabels and SetAnnotations keep m's entries. They hide
// ObjectMeta's, which holds neither.
func (s *storedCluster) GetLabels() map[string]string       { return s.labels.Map() }
func (s *storedCluster) GetAnnotations() map[string]string  { return s.annotations.Map() }
func (s *storedCluster) SetLabels(m map[string]string)      { s.labels = intern.PairsOf(m) }
func (s *storedCluster) SetAnnotations(m map[string]string) { s.annotations = intern.PairsOf(m) }

// label returns the value of the label key, "" when there is none, without building a map.
func (s *storedCluster) label(key string) string {
	v, _ := s.labels.Get(key)
	return v
}

// clusterOf reads obj, an object of the GardenerCluster informer, in the stored form: obj
// itself when the cache's transform stored it, a storedCluster sharing obj's parts (to be read
// only) when obj is a GardenerCluster of a cache without the transform, and false for anything
// else.
func clusterOf(obj any) (*storedCluster, bool) {
	switch o := obj.(type) {
	case *storedCluster:
		return o, o != nil
	case *infrav1.GardenerCluster:
		if o == nil {
			return nil, false
		}
		return storeCluster(o), true
	}
	return nil, false
}
