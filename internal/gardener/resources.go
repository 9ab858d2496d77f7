package gardener

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
)

// resources lists the Secrets the Shoot's extensions read: the DNS provider's and the audit log
// tenant's credentials.
func resources(dns *gardencorev1beta1.DNS, tenant *AuditLogTenant) []gardencorev1beta1.NamedResourceReference {
	var out []gardencorev1beta1.NamedResourceReference
	if p, secret := dnsProvider(dns); p != nil {
		out = append(out, secretReference(secret, secret))
	}
	if tenant != nil {
		out = append(out, secretReference(AuditLogCredentialsResource, tenant.SecretName))
	}
	return out
}

func secretReference(name, secret string) gardencorev1beta1.NamedResourceReference {
	return gardencorev1beta1.NamedResourceReference{
		Name:        name,
		ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret},
	}
}

// resources lists the Secrets the Shoot's extensions read, in the live shoot's order.
func (b *shootBuilder) resources(dns *gardencorev1beta1.DNS, tenant *AuditLogTenant) []gardencorev1beta1.NamedResourceReference {
	out := resources(dns, tenant)
	if b.current == nil {
		return out
	}
	name := func(r gardencorev1beta1.NamedResourceReference) string { return r.Name }
	return orderLike(out, b.current.Spec.Resources, name)
}
