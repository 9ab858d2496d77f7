package admission

import (
	"context"
	"fmt"
	"net/http"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// configWebhook is a gardener-admission-controller webhook built on
// Gardener's configvalidator.Handler: it validates a configuration that a
// shoot references by the name of a ConfigMap in its namespace, both when a
// shoot changes the reference and when a referenced ConfigMap changes. It
// answers with admission.Errored: the given code, no reason.
type configWebhook struct {
	// name is the webhook's name.
	name string
	// purpose names the configuration in messages.
	purpose string
	// key is the ConfigMap key holding the configuration.
	key string
	// configMapName is the referenced ConfigMap; empty for none.
	configMapName func(*gardencore.KubeAPIServerConfig) string
	// skipOnUpdate reports whether an update that keeps the ConfigMap and
	// the Kubernetes version needs no validation; nil means it never does.
	skipOnUpdate func(shoot, old *gardencore.Shoot) bool
	// admit validates a configuration for the shoots that use it.
	admit func(raw string, shoots []*gardencore.Shoot) (int32, error)
}

// admitShoot is the handler's admitShoot for the check's shoot.
func (w configWebhook) admitShoot(ctx context.Context, c *check) error {
	if c.shoot.DeletionTimestamp != nil {
		return nil
	}
	name := w.configMapName(c.shoot.Spec.Kubernetes.KubeAPIServer)
	if name == "" {
		return nil
	}
	if c.op == Update {
		if apiequality.Semantic.DeepEqual(c.old.Spec, c.shoot.Spec) {
			return nil
		}
		if w.configMapName(c.old.Spec.Kubernetes.KubeAPIServer) == name && c.old.Spec.Kubernetes.Version == c.shoot.Spec.Kubernetes.Version &&
			(w.skipOnUpdate == nil || w.skipOnUpdate(c.shoot, c.old)) {
			return nil
		}
	}
	cm, err := c.env.ConfigMap(ctx, c.shoot.Namespace, name)
	key := c.shoot.Namespace + "/" + name
	switch {
	case apierrors.IsNotFound(err):
		return deniedErrored(w.name, http.StatusUnprocessableEntity, fmt.Errorf("referenced %s ConfigMap %s does not exist: %w", w.purpose, key, err))
	case err != nil:
		return deniedErrored(w.name, http.StatusInternalServerError, fmt.Errorf("could not retrieve %s ConfigMap %s: %w", w.purpose, key, err))
	}
	raw, err := w.rawConfig(cm)
	if err != nil {
		return deniedErrored(w.name, http.StatusUnprocessableEntity, fmt.Errorf("error getting %s from ConfigMap %s: %w", w.purpose, key, err))
	}
	if code, err := w.admit(raw, []*gardencore.Shoot{c.shoot}); err != nil {
		return deniedErrored(w.name, code, err)
	}
	return nil
}

// admitConfigMap is the handler's admitConfigMapForShoots: an update of a
// ConfigMap that shoots reference must keep a valid configuration. old is
// the stored ConfigMap; shoots are those of its namespace.
func (w configWebhook) admitConfigMap(old, cm *corev1.ConfigMap, shoots []*gardencore.Shoot) error {
	var referencing []*gardencore.Shoot
	for _, s := range shoots {
		if w.configMapName(s.Spec.Kubernetes.KubeAPIServer) == cm.Name {
			referencing = append(referencing, s)
		}
	}
	if len(referencing) == 0 {
		return nil
	}
	raw, err := w.rawConfig(cm)
	if err != nil {
		return deniedErrored(w.name, http.StatusUnprocessableEntity, fmt.Errorf("error getting %s from ConfigMap %s/%s: %w", w.purpose, cm.Namespace, cm.Name, err))
	}
	if old != nil {
		if previous, ok := old.Data[w.key]; ok && previous == raw {
			return nil
		}
	}
	if code, err := w.admit(raw, referencing); err != nil {
		return deniedErrored(w.name, code, err)
	}
	return nil
}

// rawConfig reads the configuration's key of the ConfigMap.
func (w configWebhook) rawConfig(cm *corev1.ConfigMap) (string, error) {
	raw, ok := cm.Data[w.key]
	if !ok {
		// Gardener's message names purpose and key the other way round.
		return "", fmt.Errorf("missing %s key in %s ConfigMap data", w.purpose, w.key)
	}
	if raw == "" {
		return "", fmt.Errorf("%s in %s key is empty", w.purpose, w.key)
	}
	return raw, nil
}

// configWebhooks are Gardener's ConfigMap webhooks for shoots, in the order
// of gardener-admission-controller's webhook configuration.
var configWebhooks = []configWebhook{auditPolicy, authentication}

// AdmitConfigMap runs the ConfigMap webhooks (audit-policies.gardener.cloud,
// authentication-configuration.gardener.cloud) on an update of a
// ConfigMap: if shoots reference it, its new configuration must be valid.
// old is the stored ConfigMap; shoots are those of its namespace.
func AdmitConfigMap(old, cm *corev1.ConfigMap, shoots []*gardencore.Shoot) error {
	for _, w := range configWebhooks {
		if err := w.admitConfigMap(old, cm, shoots); err != nil {
			return err
		}
	}
	return nil
}
