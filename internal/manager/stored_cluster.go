package manager

import (
	"k8s.io/apimachinery/pkg/runtime"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// storedCluster is a GardenerCluster as the cache of the manager's namespace keeps it: its
// labels (thirteen on the manager's GardenerClusters) and annotations as intern.Pairs instead
// of Go maps (intern.StoredMeta), about 0.9 KB less per GardenerCluster.
//
// Readers see a GardenerCluster. The cache hands out copies, and a storedCluster's copy
// (DeepCopyObject) is the *infrav1.GardenerCluster it was made from, so a Get or List through
// the cache gets what it got before. Event handlers of the informer get the stored form, which
// is a client.Object: the handlers of both controllers read only its name, namespace,
// generation, labels and annotations, through StoredMeta's accessors. The fleet metrics read it
// as it is (cachedFleet). Nothing changes a storedCluster after the transform made it. A read
// with client.UnsafeDisableDeepCopy would get the stored form, which is no GardenerCluster: the
// cache refuses it with an error naming both types; no code reads GardenerClusters that way.
type storedCluster struct {
	intern.StoredMeta

	spec   infrav1.GardenerClusterSpec
	status infrav1.GardenerClusterStatus
}

// storeCluster keeps gc as a storedCluster, which takes over what gc points to: gc must not be
// used afterwards.
func storeCluster(gc *infrav1.GardenerCluster) *storedCluster {
	return &storedCluster{StoredMeta: intern.StoreMeta(gc.ObjectMeta), spec: gc.Spec, status: gc.Status}
}

// cluster builds the GardenerCluster s was made from, sharing nothing with s.
func (s *storedCluster) cluster() *infrav1.GardenerCluster {
	out := &infrav1.GardenerCluster{}
	s.CopyMetaInto(&out.ObjectMeta)
	s.spec.DeepCopyInto(&out.Spec)
	s.status.DeepCopyInto(&out.Status)
	return out
}

// DeepCopyObject implements runtime.Object: the copy of a stored GardenerCluster is the
// GardenerCluster it keeps.
func (s *storedCluster) DeepCopyObject() runtime.Object { return s.cluster() }

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
