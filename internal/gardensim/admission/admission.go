package admission

import (
	"context"
	"fmt"
	"time"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Operation is the kind of write being admitted.
type Operation string

const (
	// Create admits a new shoot.
	Create Operation = "CREATE"
	// Update admits a change to an existing shoot (update, patch, apply).
	Update Operation = "UPDATE"
)

// Env is what admission reads besides the shoots: the garden's
// CloudProfiles, Seeds and ControllerRegistrations, the Secrets and
// ConfigMaps of project namespaces, and the clock that decides which
// versions have expired. Lookups of objects that do not exist return a
// NotFound error.
type Env interface {
	// CloudProfile returns the cluster-scoped CloudProfile called name.
	CloudProfile(ctx context.Context, name string) (*gardencorev1beta1.CloudProfile, error)
	// Seed returns the cluster-scoped Seed called name.
	Seed(ctx context.Context, name string) (*gardencorev1beta1.Seed, error)
	// ControllerRegistrations lists the cluster-scoped
	// ControllerRegistrations: the extension kinds and types the garden
	// knows.
	ControllerRegistrations(ctx context.Context) ([]gardencorev1beta1.ControllerRegistration, error)
	// ConfigMap returns the ConfigMap namespace/name.
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// Secret returns the Secret namespace/name.
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Now is the current time.
	Now() time.Time
}

// Request is one write to admit.
type Request struct {
	// Operation is Create or Update.
	Operation Operation
	// Old is the stored shoot of an Update; nil for a Create.
	Old *gardencorev1beta1.Shoot
	// New is the shoot as the write would store it.
	New *gardencorev1beta1.Shoot
}

// Admit runs the webhooks that gardener-apiserver calls but that are not Gardener's API
// server's own code, on a shoot that gardener-apiserver has already defaulted, mutated,
// validated and admitted (the proxy's dry run): the shoot-dns-service mutator, then the
// validation webhooks of the acl and shoot-dns-service extensions. It
// returns the shoot as the mutating webhook leaves it, or the *apierrors.StatusError the
// webhook answers with.
func Admit(ctx context.Context, env Env, req Request) (*gardencorev1beta1.Shoot, error) {
	shoot := req.New.DeepCopy()
	var old *gardencorev1beta1.Shoot
	if req.Operation == Update && req.Old != nil {
		old = req.Old.DeepCopy()
	}
	profile, err := shootProfile(ctx, env, shoot)
	if err != nil {
		return nil, err
	}
	dnsService, err := mutateDNSService(shoot)
	if err != nil {
		return nil, err
	}
	c, err := newCheck(env, profile, shoot, old, req.Operation)
	if err != nil {
		return nil, err
	}
	c.dnsService = dnsService
	if err := c.extensionWebhooks(ctx); err != nil {
		return nil, err
	}
	return shoot, nil
}

// shootProfile is the CloudProfile the shoot names (gardener-apiserver has checked that it
// exists).
func shootProfile(ctx context.Context, env Env, shoot *gardencorev1beta1.Shoot) (*gardencorev1beta1.CloudProfile, error) {
	name := ""
	if shoot.Spec.CloudProfile != nil {
		name = shoot.Spec.CloudProfile.Name
	} else if shoot.Spec.CloudProfileName != nil { //nolint:staticcheck // SA1019: shoots below Kubernetes 1.34 name their profile here.
		name = *shoot.Spec.CloudProfileName //nolint:staticcheck // SA1019: as above.
	}
	profile, err := env.CloudProfile(ctx, name)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("read cloud profile %q of shoot %s: %w", name, shoot.Name, err))
	}
	return profile, nil
}

// check holds one admission: the shoots in both versions and the profile.
type check struct {
	env     Env
	op      Operation
	now     time.Time
	profile *gardencorev1beta1.CloudProfile
	// dnsService is the shoot-dns-service configuration its mutator
	// leaves; nil if it leaves the shoot's.
	dnsService *dnsServiceView
	// shoot and old are the internal versions, defaulted as the API
	// server defaults them; old is an empty shoot on Create.
	shoot, old *gardencore.Shoot
	// v1 and v1Old are the same in version v1beta1; v1Old is nil on
	// Create.
	v1, v1Old *gardencorev1beta1.Shoot
}

// newCheck defaults and converts the shoots.
func newCheck(env Env, profile *gardencorev1beta1.CloudProfile, shoot, old *gardencorev1beta1.Shoot, op Operation) (*check, error) {
	c := &check{env: env, op: op, now: env.Now(), profile: profile, old: &gardencore.Shoot{}}
	var err error
	if c.v1, c.shoot, err = internal(shoot); err != nil {
		return nil, err
	}
	if old != nil {
		if c.v1Old, c.old, err = internal(old); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// internal defaults a copy of s as the API server does on decoding and
// converts it to Gardener's internal version.
func internal(s *gardencorev1beta1.Shoot) (*gardencorev1beta1.Shoot, *gardencore.Shoot, error) {
	v1 := s.DeepCopy()
	gardencorev1beta1.SetObjectDefaults_Shoot(v1)
	out := &gardencore.Shoot{}
	if err := gardencorev1beta1.Convert_v1beta1_Shoot_To_core_Shoot(v1, out, nil); err != nil {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("convert shoot %s: %w", s.Name, err))
	}
	return v1, out, nil
}
