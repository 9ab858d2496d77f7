package gardenclient

import (
	"context"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// storedShoot is a shoot as the garden cache keeps it: what gardener.TrimShoot leaves of it, in
// about half the memory of a Shoot that holds the same. A Shoot is one allocation of 1 KB,
// nearly all of it fields the trim emptied, and a Go map of more than eight entries takes more
// than twice the memory of its entries in a slice (a shoot has about fifteen labels). A
// storedShoot keeps the fields the trim leaves, and the labels and annotations as sorted pairs.
//
// Readers never see one. The cache hands out copies, and a storedShoot's copy
// (DeepCopyObject) is the *gardencorev1beta1.Shoot it was made from, so a Get or List of shoots
// through the cache gets exactly what the trim left. Event handlers of the shoot informer get
// the stored form and convert it with ShootOf (ShootEvents does so). Nothing changes a
// storedShoot after the transform made it. A read with client.UnsafeDisableDeepCopy gets the
// stored form itself, which is no Shoot: the cache refuses it with an error naming both types.
type storedShoot struct {
	// StoredMeta is the shoot's metadata, its labels and annotations as sorted pairs.
	intern.StoredMeta

	seedName             *string
	providerType         string
	infrastructureConfig *runtime.RawExtension
	ipFamilies           []gardencorev1beta1.IPFamily
	domain               *string

	lastOperation       *gardencorev1beta1.LastOperation
	lastErrors          []gardencorev1beta1.LastError
	observedGeneration  int64
	advertisedAddresses []gardencorev1beta1.ShootAdvertisedAddress
}

// storeShoot keeps shoot, trimmed already (gardener.TrimShoot), as a storedShoot. The stored
// form takes over what shoot points to: shoot must not be used afterwards.
func storeShoot(shoot *gardencorev1beta1.Shoot) *storedShoot {
	s := &storedShoot{
		StoredMeta:           intern.StoreMeta(shoot.ObjectMeta),
		seedName:             shoot.Spec.SeedName,
		providerType:         shoot.Spec.Provider.Type,
		infrastructureConfig: shoot.Spec.Provider.InfrastructureConfig,
		lastOperation:        shoot.Status.LastOperation,
		lastErrors:           shoot.Status.LastErrors,
		observedGeneration:   shoot.Status.ObservedGeneration,
		advertisedAddresses:  shoot.Status.AdvertisedAddresses,
	}
	if n := shoot.Spec.Networking; n != nil {
		s.ipFamilies = n.IPFamilies
	}
	if d := shoot.Spec.DNS; d != nil {
		s.domain = d.Domain
	}
	return s
}

// shoot builds the Shoot s was made from, sharing nothing with s.
func (s *storedShoot) shoot() *gardencorev1beta1.Shoot {
	out := &gardencorev1beta1.Shoot{}
	s.CopyMetaInto(&out.ObjectMeta)
	spec := &out.Spec
	spec.SeedName = copyPtr(s.seedName)
	spec.Provider.Type = s.providerType
	if s.infrastructureConfig != nil {
		spec.Provider.InfrastructureConfig = s.infrastructureConfig.DeepCopy()
	}
	if s.ipFamilies != nil {
		spec.Networking = &gardencorev1beta1.Networking{IPFamilies: slices.Clone(s.ipFamilies)}
	}
	if s.domain != nil {
		spec.DNS = &gardencorev1beta1.DNS{Domain: copyPtr(s.domain)}
	}
	st := &out.Status
	if s.lastOperation != nil {
		st.LastOperation = s.lastOperation.DeepCopy()
	}
	if s.lastErrors != nil {
		st.LastErrors = make([]gardencorev1beta1.LastError, len(s.lastErrors))
		for i := range s.lastErrors {
			s.lastErrors[i].DeepCopyInto(&st.LastErrors[i])
		}
	}
	st.ObservedGeneration = s.observedGeneration
	if s.advertisedAddresses != nil {
		st.AdvertisedAddresses = make([]gardencorev1beta1.ShootAdvertisedAddress, len(s.advertisedAddresses))
		for i := range s.advertisedAddresses {
			s.advertisedAddresses[i].DeepCopyInto(&st.AdvertisedAddresses[i])
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object: the copy of a stored shoot is the Shoot it keeps.
func (s *storedShoot) DeepCopyObject() runtime.Object { return s.shoot() }

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ShootOf returns the shoot obj holds: obj itself when it is a Shoot, the Shoot a stored shoot
// keeps (a new one for each call), and false for anything else.
func ShootOf(obj any) (*gardencorev1beta1.Shoot, bool) {
	switch o := obj.(type) {
	case *gardencorev1beta1.Shoot:
		return o, o != nil
	case *storedShoot:
		return o.shoot(), o != nil
	}
	return nil, false
}

// ShootEvents adapts h, a handler of shoot events, to the events of the garden cache's shoot
// informer, which delivers the stored form: watch shoots with
// source.Kind(cache, client.Object(&gardencorev1beta1.Shoot{}), ShootEvents(h)). An event of
// anything but a shoot is dropped.
func ShootEvents(h handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request]) handler.TypedEventHandler[client.Object, reconcile.Request] {
	return shootEvents{h}
}

type shootEvents struct {
	h handler.TypedEventHandler[*gardencorev1beta1.Shoot, reconcile.Request]
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (e shootEvents) Create(ctx context.Context, ev event.TypedCreateEvent[client.Object], q queue) {
	if s, ok := ShootOf(ev.Object); ok {
		e.h.Create(ctx, event.TypedCreateEvent[*gardencorev1beta1.Shoot]{Object: s, IsInInitialList: ev.IsInInitialList}, q)
	}
}

func (e shootEvents) Update(ctx context.Context, ev event.TypedUpdateEvent[client.Object], q queue) {
	old, okOld := ShootOf(ev.ObjectOld)
	s, ok := ShootOf(ev.ObjectNew)
	if okOld && ok {
		e.h.Update(ctx, event.TypedUpdateEvent[*gardencorev1beta1.Shoot]{ObjectOld: old, ObjectNew: s}, q)
	}
}

func (e shootEvents) Delete(ctx context.Context, ev event.TypedDeleteEvent[client.Object], q queue) {
	if s, ok := ShootOf(ev.Object); ok {
		e.h.Delete(ctx, event.TypedDeleteEvent[*gardencorev1beta1.Shoot]{Object: s, DeleteStateUnknown: ev.DeleteStateUnknown}, q)
	}
}

func (e shootEvents) Generic(ctx context.Context, ev event.TypedGenericEvent[client.Object], q queue) {
	if s, ok := ShootOf(ev.Object); ok {
		e.h.Generic(ctx, event.TypedGenericEvent[*gardencorev1beta1.Shoot]{Object: s}, q)
	}
}
