package admission_test

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// withExtension lists one more extension.
func withExtension(typ, config string, disabled bool) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		s.Spec.Extensions = append(s.Spec.Extensions, extension(typ, config, disabled))
	}
}

// TestACLWebhook covers the acl extension's validation of its
// providerConfig.
func TestACLWebhook(t *testing.T) {
	acl := func(config string) func(*gardencorev1beta1.Shoot) { return withExtension("acl", config, false) }
	many := `{"rule":{"action":"ALLOW","type":"remote_ip","cidrs":[` + `"10.0.0.0/8"` + repeat(`,"10.0.0.0/8"`, 50) + `]}}`
	runCases(t, []admissionCase{
		{name: "a valid rule", change: acl(aclConfig)},
		{name: "no providerConfig", change: acl("")},
		{name: "a lower-case action and type", change: acl(`{"rule":{"action":"deny","type":"source_ip","cidrs":["1.2.3.4/32"]}}`)},
		{
			name: "an unknown action", change: acl(`{"rule":{"action":"PERMIT","type":"remote_ip","cidrs":["10.0.0.0/8"]}}`),
			want: forbidden(aclDenied + "action must either be 'ALLOW' or 'DENY'"),
		},
		{
			name: "an unknown type", change: acl(`{"rule":{"action":"ALLOW","type":"client_ip","cidrs":["10.0.0.0/8"]}}`),
			want: forbidden(aclDenied + "type must either be 'direct_remote_ip', 'remote_ip' or 'source_ip'"),
		},
		{
			name: "no CIDRs", change: acl(`{"rule":{"action":"ALLOW","type":"remote_ip","cidrs":[]}}`),
			want: forbidden(aclDenied + "CIDRs must not be empty"),
		},
		{
			name: "an invalid CIDR", change: acl(`{"rule":{"action":"ALLOW","type":"remote_ip","cidrs":["10.0.0.0/33"]}}`),
			want: forbidden(aclDenied + "invalid CIDR address: 10.0.0.0/33"),
		},
		{
			name: "too many CIDRs", change: acl(many),
			want: forbidden(aclDenied + "spec.extensions[0].providerConfig.rule.cidrs: Too many: 51: must have at most 50 items"),
		},
		{
			name: "an undecodable providerConfig", change: acl(`{"rule":{"action":1}}`),
			want: forbidden(aclDenied + "error decoding ACL extension spec: json: cannot unmarshal number into Go struct field ACLRule.rule.action of type string"),
		},
		{name: "a disabled acl is not validated", change: withExtension("acl", `{"rule":{"action":"PERMIT"}}`, true)},
	})
}

// TestDNSServiceWebhooks covers the shoot-dns-service extension's mutator
// and validator of its providerConfig.
func TestDNSServiceWebhooks(t *testing.T) {
	dns := func(config string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Extensions[2].ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		}
	}
	const providers = `{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","kind":"DNSConfig","providers":[{"secretName":"%s","type":"%s"}],"syncProvidersFromShootSpecDNS":false}`
	const credentials = `{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","kind":"DNSConfig","providers":[{"credentials":"%s","type":"aws-route53"}],"syncProvidersFromShootSpecDNS":false}`
	const neither = `{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","kind":"DNSConfig","providers":[{"type":"aws-route53"}],"syncProvidersFromShootSpecDNS":false}`
	// onlyCredentialsRef names the DNS provider's credentials by credentialsRef only, as shoots
	// from Kubernetes 1.35 on must, on a shoot at 1.35.
	onlyCredentialsRef := func(s *gardencorev1beta1.Shoot) {
		s.Spec.Kubernetes.Version = "1.35.0"
		p := &s.Spec.DNS.Providers[0]                                                                                                       //nolint:staticcheck // SA1019: the deprecated provider under test.
		p.SecretName, p.CredentialsRef = nil, &autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: dnsSecret} //nolint:staticcheck // SA1019: as above.
	}
	runCases(t, []admissionCase{
		{name: "providers synced from spec.dns", change: landscape, env: landscapeObjects},
		{name: "a provider with a secret of spec.resources", change: on(landscape, dns(sprintf(providers, dnsSecret, "aws-route53"))), env: landscapeObjects},
		{
			name: "a provider whose secret is no named resource", change: on(landscape, dns(sprintf(providers, "other", "aws-route53"))), env: landscapeObjects,
			want: forbidden(dnsDenied + `spec.extensions.[@.type='shoot-dns-service'].providerConfig[0].secretName: Invalid value: "other": secretName is not defined as named resource references at 'spec.resources'`),
		},
		{name: "a provider with credentials of spec.resources", change: on(landscape, dns(sprintf(credentials, dnsSecret))), env: landscapeObjects},
		{
			name: "a provider whose credentials are no named resource", change: on(landscape, dns(sprintf(credentials, "other"))), env: landscapeObjects,
			want: forbidden(dnsDenied + `spec.extensions.[@.type='shoot-dns-service'].providerConfig[0].credentials: Invalid value: "other": credentials is not defined as named resource references at 'spec.resources'`),
		},
		{
			name: "a provider without secretName or credentials", change: on(landscape, dns(neither)), env: landscapeObjects,
			want: forbidden(dnsDenied + `[spec.extensions.[@.type='shoot-dns-service'].providerConfig[0].secretName: Invalid value: "": either secretName or credentials must be provided, ` +
				`spec.extensions.[@.type='shoot-dns-service'].providerConfig[0].credentials: Invalid value: "": either secretName or credentials must be provided]`),
		},
		{name: "providers synced from a spec.dns with only credentialsRef", change: on(landscape, onlyCredentialsRef), env: landscapeObjects},
		{
			name: "an unsupported provider type", change: on(landscape, dns(sprintf(providers, dnsSecret, "route66"))), env: landscapeObjects,
			want: forbidden(dnsDenied + `spec.extensions.[@.type='shoot-dns-service'].providerConfig[0].type: Invalid value: "route66": unsupported provider type. Valid types are: ` +
				`alicloud-dns, aws-route53, azure-dns, azure-private-dns, cloudflare-dns, google-clouddns, infoblox-dns, netlify-dns, openstack-designate, powerdns, remote, rfc2136`),
		},
		{
			name: "an undecodable providerConfig refused by the mutator", change: on(landscape, dns(`{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","kind":"DNSConfig","providers":"all"}`)), env: landscapeObjects,
			want: forbidden(dnsMutDenied + "failed to decode shoot-dns-service provider config: json: cannot unmarshal string into Go struct field DNSConfig.providers of type []v1alpha1.DNSProvider"),
		},
		{
			name:   "an undecodable providerConfig refused by the validator",
			change: withExtension("shoot-dns-service", `{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","kind":"DNSConfig","providers":"all"}`, false),
			want:   forbidden(dnsDenied + "failed to decode shoot-dns-service provider config: json: cannot unmarshal string into Go struct field DNSConfig.providers of type []v1alpha1.DNSProvider"),
		},
		{name: "the cert service has no admission webhook", change: withExtension("shoot-cert-service", `{"not":"a CertConfig"}`, false)},
	})
}
