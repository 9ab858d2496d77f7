package runtime

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// applyAuthentication writes the structured authentication ConfigMap of the runtime's shoot
// (structured-auth-config-<shoot> in the project namespace) with a server-side apply, before the
// shoot that references it: Gardener refuses a shoot whose ConfigMap does not exist. A Runtime
// without a main OIDC provider and without a landscape default gets none. A ConfigMap that is
// no longer wanted stays until deprovisioning, since the shoot may still reference it until
// its next reconciliation. Like the shoot, once the shoot was reconciled it is written only when
// it differs from what the Runtime asks (one read of the cache instead of a write on a
// re-check), and while neither the Runtime nor the ConfigMap changed since it last was as asked,
// it is not even rendered. A ConfigMap labelled for another Runtime is never written.
func (s steps) applyAuthentication(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	current, err := s.currentAuthentication(ctx, rt, shoot)
	if err != nil {
		return fsm.Fail(err)
	}
	on := ""
	if current != nil {
		on = versionsOf(rt, []client.Object{current})
	}
	if !patchForced(rt) && s.verdicts.holds(verdictAuthentication, rt, on) {
		// Neither the Runtime nor its ConfigMap changed since this process found the ConfigMap
		// as the Runtime asks: no render, no validation (verdicts).
		return fsm.Next(StepApplyShoot)
	}
	// Only the ConfigMap: the Shoot is rendered by the next step, against the shoot Gardener has.
	cm, err := gardener.AuthenticationConfigMap(rt, s.Render)
	if err != nil {
		return fsm.Fail(fmt.Errorf("render runtime: %w", err))
	}
	if cm == nil {
		return fsm.Next(StepApplyShoot)
	}
	labelForRuntime(cm, rt)
	if current == nil {
		return s.applyAuthenticationConfigMap(ctx, cm)
	}
	if gardenOwner(current, rt) != "" {
		return fsm.Fail(takenError(current, rt))
	}
	cm, settled, err := s.settledAuthentication(rt, cm, current)
	if err != nil {
		return fsm.Fail(fmt.Errorf("render runtime: %w", err))
	}
	if settled {
		s.verdicts.found(verdictAuthentication, rt, on)
		return fsm.Next(StepApplyShoot)
	}
	return s.applyAuthenticationConfigMap(ctx, cm)
}

// currentAuthentication reads rt's ConfigMap as Gardener has it, from the cache of the project's
// ConfigMaps: nil when there is none. Without its shoot (read from the shoot cache, no request)
// the Runtime is being created: its ConfigMap is almost always missing, so it is taken as
// missing and applied without being read, one Gardener request instead of two while a landscape
// provisions at the rate limit.
func (s steps) currentAuthentication(ctx context.Context, rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot) (*corev1.ConfigMap, error) {
	if shoot == nil {
		return nil, nil
	}
	current := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: s.Render.Namespace, Name: gardener.AuthenticationConfigName(rt.Spec.Shoot.Name)}
	switch err := s.Garden.Get(ctx, key, current); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get authentication configuration %s: %w", key.Name, err)
	}
	return current, nil
}

// settledAuthentication reports whether current, the Runtime's ConfigMap in the garden, already
// says what cm asks for; if not, it returns what to write instead of cm.
func (s steps) settledAuthentication(rt *infrav1.Runtime, cm, current *corev1.ConfigMap) (*corev1.ConfigMap, bool, error) {
	if gardener.WrittenByUpstream(rt, s.Render, current) && !patchForced(rt) {
		// Upstream's ConfigMap for the Runtime's current OIDC settings: it already says what the
		// Runtime asks for, and a takeover writes nothing (its users keep their names).
		return cm, true, nil
	}
	// A ConfigMap that exists keeps its users' names: its username and groups prefixes stay
	// until the Runtime's OIDC settings change.
	cm, err := gardener.KeepLivePrefixes(cm, current)
	if err != nil {
		return nil, false, err
	}
	// What counts in the ConfigMap is its data and the OIDC settings it was written for: equal
	// ones are enough (its labels follow with the next change).
	return cm, sameConfigMap(cm, current) && !patchForced(rt), nil
}

// applyAuthenticationConfigMap writes the ConfigMap with a server-side apply and moves on.
func (s steps) applyAuthenticationConfigMap(ctx context.Context, cm *corev1.ConfigMap) fsm.Outcome {
	ac, err := applyConfiguration(cm)
	if err != nil {
		return fsm.Fail(err)
	}
	if err := s.Garden.Apply(ctx, client.ApplyConfigurationFromUnstructured(ac), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fsm.Fail(fmt.Errorf("apply authentication configuration %s: %w", cm.Name, err))
	}
	return fsm.Next(StepApplyShoot)
}

// sameConfigMap reports whether current has want's data and was written for the same OIDC
// settings.
func sameConfigMap(want, current *corev1.ConfigMap) bool {
	key := gardener.AnnotationOIDCInput
	return maps.Equal(want.Data, current.Data) && maps.EqualFunc(want.BinaryData, current.BinaryData, bytes.Equal) &&
		want.Annotations[key] == current.Annotations[key]
}

// ownerLabels are the labels that tie an object the controller writes to its Runtime.
func ownerLabels(rt *infrav1.Runtime) map[string]string {
	return map[string]string{
		LabelRuntimeName:      rt.Name,
		LabelRuntimeNamespace: rt.Namespace,
	}
}
