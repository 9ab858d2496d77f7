package admission

import (
	"context"
	"fmt"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// referenceManager is the ResourceReferenceManager plugin: a shoot may only
// reference objects that exist. Of its checks the simulator makes the one on
// the structured authentication ConfigMap (the cloud profile is checked by
// ShootMutator before, and the garden serves no SecretBindings). A missing
// ConfigMap is a 403 whose message carries the lookup's NotFound.
func (c *check) referenceManager(ctx context.Context) error {
	if c.op == Update && apiequality.Semantic.DeepEqual(c.shoot.Spec, c.old.Spec) {
		return nil
	}
	api, oldAPI := c.shoot.Spec.Kubernetes.KubeAPIServer, c.old.Spec.Kubernetes.KubeAPIServer
	if !structuredAuthenticationChanged(oldAPI, api) || api == nil || api.StructuredAuthentication == nil || c.shoot.DeletionTimestamp != nil {
		return nil
	}
	if _, err := c.env.ConfigMap(ctx, c.shoot.Namespace, api.StructuredAuthentication.ConfigMapName); err != nil {
		return forbidden(c.shoot.Name, fmt.Errorf("failed to resolve structured authentication config map reference: %w", err))
	}
	return nil
}

// structuredAuthenticationChanged mirrors the plugin's test of whether the
// reference is new or changed.
func structuredAuthenticationChanged(old, api *gardencore.KubeAPIServerConfig) bool {
	switch {
	case old == nil && api != nil:
		return api.StructuredAuthentication != nil
	case old != nil && api == nil:
		return old.StructuredAuthentication != nil
	case old != nil && api != nil:
		return !apiequality.Semantic.DeepEqual(old.StructuredAuthentication, api.StructuredAuthentication)
	}
	return false
}
