package admission

import (
	"context"
	"fmt"
	"reflect"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// referenceManager is the ResourceReferenceManager plugin: a shoot may only
// reference objects that exist. Of its checks the simulator makes those on
// spec.resources, on the credentials of spec.dns.providers and on the
// structured authentication ConfigMap (the cloud profile is checked by
// ShootMutator before, and the garden serves no SecretBindings). Each runs
// only if its part of the spec changed, and none for an unchanged spec or a
// shoot in deletion. A missing object is a 403 whose message carries the
// lookup's NotFound.
func (c *check) referenceManager(ctx context.Context) error {
	if c.op == Update && (c.shoot.DeletionTimestamp != nil || reflect.DeepEqual(c.shoot.Spec, c.old.Spec)) {
		return nil
	}
	for _, step := range []func(context.Context) error{c.resourceReferences, c.dnsCredentials, c.structuredAuthenticationReference} {
		if err := step(ctx); err != nil {
			return forbidden(c.shoot.Name, err)
		}
	}
	return nil
}

// resourceReferences: changed spec.resources must reference objects of a
// kind the garden serves that exist in the shoot's namespace.
func (c *check) resourceReferences(ctx context.Context) error {
	if apiequality.Semantic.DeepEqual(c.old.Spec.Resources, c.shoot.Spec.Resources) {
		return nil
	}
	for _, r := range c.shoot.Spec.Resources {
		ref := r.ResourceRef
		lookup, ok := c.lookup(ref.APIVersion, ref.Kind)
		if !ok {
			return fmt.Errorf("resource reference %q could not be resolved for API resource with version %q and kind %q", r.Name, ref.APIVersion, ref.Kind)
		}
		if err := lookup(ctx, ref.Name); err != nil {
			return fmt.Errorf("failed to resolve resource reference %q: %w", r.Name, err)
		}
	}
	return nil
}

// dnsCredentials: when spec.dns changed, the Secret or WorkloadIdentity each
// provider's credentialsRef names must exist.
func (c *check) dnsCredentials(ctx context.Context) error {
	dns := c.shoot.Spec.DNS
	if dns == nil || c.shoot.DeletionTimestamp != nil || apiequality.Semantic.DeepEqual(c.old.Spec.DNS, dns) {
		return nil
	}
	for _, p := range internalDNSProviders(dns) {
		ref := p.CredentialsRef
		if ref == nil {
			continue
		}
		switch {
		case ref.APIVersion == corev1.SchemeGroupVersion.String() && ref.Kind == "Secret":
			if _, err := c.env.Secret(ctx, c.shoot.Namespace, ref.Name); err != nil {
				return fmt.Errorf("failed to resolve credentials reference of type Secret: %w", err)
			}
		case ref.APIVersion == securityv1alpha1.SchemeGroupVersion.String() && ref.Kind == "WorkloadIdentity":
			return fmt.Errorf("failed to resolve credentials reference of type WorkloadIdentity: %w", workloadIdentityNotFound(ref.Name))
		}
	}
	return nil
}

// structuredAuthenticationReference: a new or changed structured
// authentication ConfigMap must exist.
func (c *check) structuredAuthenticationReference(ctx context.Context) error {
	api, oldAPI := c.shoot.Spec.Kubernetes.KubeAPIServer, c.old.Spec.Kubernetes.KubeAPIServer
	if !structuredAuthenticationChanged(oldAPI, api) || api == nil || api.StructuredAuthentication == nil || c.shoot.DeletionTimestamp != nil {
		return nil
	}
	if _, err := c.env.ConfigMap(ctx, c.shoot.Namespace, api.StructuredAuthentication.ConfigMapName); err != nil {
		return fmt.Errorf("failed to resolve structured authentication config map reference: %w", err)
	}
	return nil
}

// lookup is how the plugin finds a referenced object of the given API
// version and kind in the shoot's namespace; ok is false for a kind the
// garden does not serve as a namespaced resource.
func (c *check) lookup(apiVersion, kind string) (func(context.Context, string) error, bool) {
	switch {
	case apiVersion == corev1.SchemeGroupVersion.String() && kind == "Secret":
		return func(ctx context.Context, name string) error {
			_, err := c.env.Secret(ctx, c.shoot.Namespace, name)
			return err
		}, true
	case apiVersion == corev1.SchemeGroupVersion.String() && kind == "ConfigMap":
		return func(ctx context.Context, name string) error {
			_, err := c.env.ConfigMap(ctx, c.shoot.Namespace, name)
			return err
		}, true
	case apiVersion == securityv1alpha1.SchemeGroupVersion.String() && kind == "WorkloadIdentity":
		return func(_ context.Context, name string) error { return workloadIdentityNotFound(name) }, true
	}
	return nil, false
}

// workloadIdentityNotFound is the NotFound of a WorkloadIdentity: the
// simulated garden holds none.
func workloadIdentityNotFound(name string) error {
	return apierrors.NewNotFound(securityv1alpha1.Resource("workloadidentities"), name)
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
