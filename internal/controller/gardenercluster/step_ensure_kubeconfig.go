package gardenercluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Reasons of the step's terminal failures: the GardenerCluster names a Secret the manager may not
// write.
const (
	ReasonSecretOutsideNamespace = "KubeconfigSecretOutsideNamespace"
	ReasonSecretNotOwned         = "KubeconfigSecretNotOwned"
)

// ManagedBy is the value of the managed-by label (infrav1.LabelKymaManagedBy) on the kubeconfig
// Secrets the manager creates, the same as upstream's.
const ManagedBy = "infrastructure-manager"

type kubeconfigs struct{ Config }

// stored is what the Secret says about the kubeconfig it holds.
type stored struct {
	present         bool
	issued, expires time.Time
	// shoot and uid are the shoot the kubeconfig was issued for; uid is empty for a kubeconfig
	// upstream's manager issued, which records only the shoot's name.
	shoot string
	uid   types.UID
	// upstream is set for a kubeconfig upstream's manager issued: its age is known from
	// upstream's last-sync annotation alone, and it is due by upstream's rule.
	upstream bool
}

// issuedFor reports whether the stored kubeconfig was issued for the shoot of that name and uid.
func (s stored) issuedFor(shoot string, uid types.UID) bool {
	return s.shoot == shoot && (s.uid == "" || s.uid == uid)
}

// NotHeldPoll is how often a GardenerCluster that no Runtime holds, or whose shoot does not
// exist, is looked at again; a change of the GardenerCluster wakes it first.
const NotHeldPoll = 5 * time.Minute

// AddressPoll is how often a GardenerCluster whose shoot has no API server address yet (a shoot
// created again under its name) is looked at again; the Runtime waiting for the kubeconfig wakes
// it first, by asking for a rotation once the shoot is reconciled.
const AddressPoll = 30 * time.Second

// ensure keeps a valid kubeconfig in the Secret: it fetches one when there is none, when the
// stored one has lived past the rotation point, or when it was issued for another shoot (by
// name, or by uid: a shoot deleted and created again under the same name), and otherwise is done
// until then. The GardenerCluster must belong to a Runtime (holder); until one holds it, it
// waits and nothing is written. The Secret must be in the GardenerCluster's namespace and, when
// it exists, be the one the manager created for it (outsideNamespace, notOwned); otherwise the
// step fails for good and writes nothing.
func (k kubeconfigs) ensure(ctx context.Context, gc *infrav1.GardenerCluster) fsm.Outcome {
	ref := gc.Spec.Kubeconfig.Secret
	w, stop := k.observe(ctx, gc)
	if stop != nil {
		return *stop
	}
	secret, uid := w.secret, w.uid
	now := k.Clock.Now()
	cur := readStored(secret, ref.Key, k.KubeconfigLifetime)
	_, forced := gc.Annotations[infrav1.AnnotationForceKubeconfigRotation]
	if rotateAt := k.rotateAt(cur); cur.present && cur.issuedFor(gc.Spec.Shoot.Name, uid) && now.Before(rotateAt) && !forced {
		if at := gc.Status.KubeconfigExpiresAt; at == nil || !at.Time.Equal(cur.expires) {
			// A kubeconfig taken over from upstream: its expiry enters the status unchanged.
			gc.Status.KubeconfigExpiresAt = &metav1.Time{Time: cur.expires}
		}
		return fsm.DoneUntil(rotateAt.Sub(now))
	}
	kubeconfig, expires, err := k.Kubeconfigs.AdminKubeconfig(ctx, gc.Spec.Shoot.Name, k.KubeconfigLifetime)
	if err != nil {
		// The stored kubeconfig, if any, stays: a failed rotation never empties the Secret.
		return fsm.Fail(err)
	}
	secret.Name, secret.Namespace = ref.Name, ref.Namespace
	issued := stored{present: true, issued: now, expires: expires, shoot: gc.Spec.Shoot.Name, uid: uid}
	if err := k.store(ctx, secret, ref.Key, kubeconfig, issued, secretLabels(gc, w.holder)); err != nil {
		return fsm.Fail(err)
	}
	if forced {
		if err := k.clearForcedRotation(ctx, gc); err != nil {
			return fsm.Fail(err)
		}
	}
	gc.Status.KubeconfigExpiresAt = &metav1.Time{Time: expires}
	gc.Status.KubeconfigRotatedAt = &metav1.Time{Time: now}
	return fsm.DoneUntil(k.rotateAt(issued).Sub(now))
}

// world is what ensure reads before it decides: the Runtime that holds the GardenerCluster, its
// kubeconfig Secret (empty when missing) and the uid of its shoot.
type world struct {
	holder *infrav1.Runtime
	secret *corev1.Secret
	uid    types.UID
}

// observe reads the world of gc. A non-nil outcome ends the step there: a Secret outside the
// namespace or not the manager's, no Runtime that holds gc, no shoot, or a failed read.
func (k kubeconfigs) observe(ctx context.Context, gc *infrav1.GardenerCluster) (world, *fsm.Outcome) {
	stop := func(o fsm.Outcome) (world, *fsm.Outcome) { return world{}, &o }
	ref := gc.Spec.Kubeconfig.Secret
	if err := outsideNamespace(gc); err != nil {
		return stop(fsm.Fail(err))
	}
	rt, why, err := k.holder(ctx, gc)
	if err != nil {
		return stop(fsm.Fail(err))
	}
	if rt == nil {
		return stop(fsm.Wait(NotHeldPoll, "No Runtime holds this GardenerCluster ("+why+"): no kubeconfig is written until one does"))
	}
	secret := &corev1.Secret{}
	err = k.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return stop(fsm.Fail(fmt.Errorf("get secret %s: %w", ref.Name, err)))
	}
	if err == nil {
		if err := notOwned(gc, secret); err != nil {
			return stop(fsm.Fail(err))
		}
	}
	shoot, err := k.Kubeconfigs.Shoot(ctx, gc.Spec.Shoot.Name)
	if apierrors.IsNotFound(err) {
		return stop(fsm.Wait(NotHeldPoll, "Shoot "+gc.Spec.Shoot.Name+" does not exist: no kubeconfig can be issued for it"))
	}
	if err != nil {
		return stop(fsm.Fail(err))
	}
	if !shoot.Addressed {
		return stop(fsm.Wait(AddressPoll, "Shoot "+gc.Spec.Shoot.Name+" advertises no API server address yet: no kubeconfig can be issued for it"))
	}
	return world{holder: rt, secret: secret, uid: shoot.UID}, nil
}

// outsideNamespace refuses a Secret outside the GardenerCluster's own namespace. Whoever may
// create a GardenerCluster would otherwise have the manager write an admin kubeconfig wherever
// the manager may write Secrets, which is every namespace; confined to its own namespace, the
// kubeconfig goes only where its GardenerCluster already is (the manager's namespace, where
// the Runtime controller creates them).
func outsideNamespace(gc *infrav1.GardenerCluster) error {
	ref := gc.Spec.Kubeconfig.Secret
	if ref.Namespace == gc.Namespace {
		return nil
	}
	return retry.Terminal(ReasonSecretOutsideNamespace, fmt.Errorf(
		"the kubeconfig Secret %s/%s is outside the GardenerCluster's namespace %s: the manager stores a kubeconfig only in the namespace of its GardenerCluster, and wrote nothing",
		ref.Namespace, ref.Name, gc.Namespace))
}

// notOwned refuses an existing Secret the manager did not create for this GardenerCluster, so a
// GardenerCluster cannot overwrite a Secret of someone else (or of another GardenerCluster).
func notOwned(gc *infrav1.GardenerCluster, secret *corev1.Secret) error {
	if OwnsSecret(secret, gc.Name) {
		return nil
	}
	return retry.Terminal(ReasonSecretNotOwned, fmt.Errorf(
		"the Secret %s/%s exists and is not the manager's kubeconfig Secret of GardenerCluster %s (labels %s=%s and %s=%s): the manager overwrites no Secret it did not create, and wrote nothing",
		secret.Namespace, secret.Name, gc.Name, infrav1.LabelKymaManagedBy, ManagedBy, infrav1.LabelClusterName, gc.Name))
}

// OwnsSecret reports whether secret is the kubeconfig Secret the manager created for the
// GardenerCluster named cluster. Both this manager and upstream's label every kubeconfig Secret
// they create with managed-by infrastructure-manager and the GardenerCluster's name (see
// store), so Secrets upstream created are taken over as they are, and a Secret someone else
// created, or one created for another GardenerCluster, is not the manager's to write.
func OwnsSecret(secret *corev1.Secret, cluster string) bool {
	return OwnsKubeconfig(secret.Labels[infrav1.LabelKymaManagedBy], secret.Labels[infrav1.LabelClusterName], cluster)
}

// OwnsKubeconfig is OwnsSecret for a Secret whose labels managed-by and cluster-name are
// managedBy and clusterName.
func OwnsKubeconfig(managedBy, clusterName, cluster string) bool {
	return managedBy == ManagedBy && clusterName == cluster
}

// rotateAt is when a kubeconfig is due for rotation. One upstream's manager issued is due when
// upstream would rotate it: at 95% of its rotation period (the fraction KubeconfigRotateAfter of the
// lifetime, upstream's --minimal-rotation-time of its --kubeconfig-expiration-time) after its
// last sync. So a takeover rotates no kubeconfig upstream would not have rotated then.
func (k kubeconfigs) rotateAt(s stored) time.Time {
	life := s.expires.Sub(s.issued)
	if s.upstream {
		return s.issued.Add(time.Duration(upstreamRotationRatio * k.KubeconfigRotateAfter * float64(life)))
	}
	return s.issued.Add(time.Duration(float64(life) * k.KubeconfigRotateAfter))
}

// upstreamRotationRatio is the part of its rotation period after which upstream's manager
// rotates a kubeconfig (its rotationPeriodRatio).
const upstreamRotationRatio = 0.95

// readStored reads what secret says about the kubeconfig under key. Its age is in
// AnnotationIssuedAt and AnnotationExpiresAt; a Secret upstream's manager wrote has only
// upstream's last-sync annotation, the time it fetched the kubeconfig, which was issued for
// lifetime (both managers take the lifetime from --kubeconfig-expiration-time). The shoot it
// was issued for is in AnnotationShoot and AnnotationShootUID; a Secret upstream's manager wrote
// has only the shoot name label it copied from its GardenerCluster.
func readStored(secret *corev1.Secret, key string, lifetime time.Duration) stored {
	if len(secret.Data[key]) == 0 {
		return stored{}
	}
	s := stored{present: true, shoot: secret.Annotations[AnnotationShoot], uid: types.UID(secret.Annotations[AnnotationShootUID])}
	issued, err1 := time.Parse(time.RFC3339, secret.Annotations[AnnotationIssuedAt])
	expires, err2 := time.Parse(time.RFC3339, secret.Annotations[AnnotationExpiresAt])
	_, ours := secret.Annotations[AnnotationIssuedAt]
	synced, err3 := time.Parse(time.RFC3339, secret.Annotations[infrav1.AnnotationLastSync])
	switch {
	case err1 == nil && err2 == nil:
		s.issued, s.expires = issued, expires
	case !ours && err3 == nil && lifetime > 0:
		s.issued, s.expires, s.upstream = synced, synced.Add(lifetime), true
	default:
		return stored{} // unknown age: rotate
	}
	if s.shoot == "" {
		s.shoot = secret.Labels[infrav1.LabelShootName]
	}
	return s
}

// store writes the kubeconfig, its age and its shoot into the Secret, with labels, creating it
// when missing. The labels replace the Secret's own.
func (k kubeconfigs) store(ctx context.Context, secret *corev1.Secret, key string, kubeconfig []byte, s stored, labels map[string]string) error {
	exists := secret.ResourceVersion != ""
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Data[key] = kubeconfig
	secret.Annotations[AnnotationIssuedAt] = s.issued.UTC().Format(time.RFC3339)
	secret.Annotations[AnnotationExpiresAt] = s.expires.UTC().Format(time.RFC3339)
	secret.Annotations[infrav1.AnnotationLastSync] = s.issued.UTC().Format(time.RFC3339)
	secret.Annotations[AnnotationShoot] = s.shoot
	secret.Annotations[AnnotationShootUID] = string(s.uid)
	secret.Labels = labels
	var err error
	if exists {
		err = k.Client.Update(ctx, secret)
	} else {
		err = k.Client.Create(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("store kubeconfig in secret %s: %w", secret.Name, err)
	}
	return nil
}

// clearForcedRotation removes the annotation that forced a rotation, once the new kubeconfig is
// stored, so the next rotation is due by age again.
func (k kubeconfigs) clearForcedRotation(ctx context.Context, gc *infrav1.GardenerCluster) error {
	patch := client.MergeFrom(gc.DeepCopy())
	delete(gc.Annotations, infrav1.AnnotationForceKubeconfigRotation)
	if err := k.Client.Patch(ctx, gc, patch); err != nil {
		return fmt.Errorf("remove %s from GardenerCluster %s: %w", infrav1.AnnotationForceKubeconfigRotation, gc.Name, err)
	}
	return nil
}
