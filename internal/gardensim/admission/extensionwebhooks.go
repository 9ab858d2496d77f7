package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	dnsv1alpha1 "github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/internal/dnsv1alpha1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/internal/extensionspec"
)

// The shoot webhooks of the extensions, named as Gardener's extension
// webhook library names them: <webhook>.<admission component>.extensions.gardener.cloud.
const (
	// ACLWebhook validates the acl extension's providerConfig.
	ACLWebhook = "validator.gardener-extension-admission-acl.extensions.gardener.cloud"
	// DNSServiceWebhook validates the shoot-dns-service extension's
	// providerConfig.
	DNSServiceWebhook = "validator.admission-shoot-dns-service.extensions.gardener.cloud"
	// DNSServiceMutatorWebhook syncs the shoot-dns-service extension's
	// providers from spec.dns.
	DNSServiceMutatorWebhook = "mutator.admission-shoot-dns-service.extensions.gardener.cloud"
)

// Extension types with shoot webhooks.
const (
	aclType        = "acl"
	dnsServiceType = "shoot-dns-service"
)

// maxACLCIDRs is the acl admission's default --maxAllowedCIDRs.
const maxACLCIDRs = 50

// dnsServiceDecoder decodes DNSConfigs as the shoot-dns-service admission
// does: leniently, with the version it serves.
var dnsServiceDecoder runtime.Decoder

func init() {
	scheme := runtime.NewScheme()
	utilruntime.Must(dnsv1alpha1.AddToScheme(scheme))
	dnsServiceDecoder = serializer.NewCodecFactory(scheme).UniversalDecoder()
}

// extensionWebhooks runs the extensions' shoot validators. The extensions
// select shoots by the label extensions.extensions.gardener.cloud/<type>,
// which Gardener's ExtensionLabels plugin sets for each listed extension
// that is not disabled; so each validator runs only for such a shoot. The
// extension webhook library answers a refusal with 403 Forbidden.
func (c *check) extensionWebhooks(context.Context) error {
	if err := validateACL(c.shoot); err != nil {
		return deniedForbidden(ACLWebhook, err)
	}
	if err := c.validateDNSService(); err != nil {
		return deniedForbidden(DNSServiceWebhook, err)
	}
	return nil
}

// validateACL mirrors the acl extension's shoot validator
// (gardener-extension-acl pkg/admission/validator): its providerConfig must
// decode as JSON, and a rule needs the action ALLOW or DENY, a known type
// and between 1 and 50 valid CIDRs.
func validateACL(shoot *gardencore.Shoot) error {
	i, ext := enabledExtension(shoot.Spec.Extensions, aclType)
	if ext == nil {
		return nil
	}
	spec := &extensionspec.ExtensionSpec{}
	if ext.ProviderConfig != nil && ext.ProviderConfig.Raw != nil {
		if err := json.Unmarshal(ext.ProviderConfig.Raw, &spec); err != nil {
			return fmt.Errorf("error decoding ACL extension spec: %w", err)
		}
	}
	if spec == nil || spec.Rule == nil {
		return nil
	}
	rule := spec.Rule
	switch {
	case !slices.Contains([]string{"allow", "deny"}, strings.ToLower(rule.Action)):
		return errors.New("action must either be 'ALLOW' or 'DENY'")
	case !slices.Contains([]string{"direct_remote_ip", "remote_ip", "source_ip"}, strings.ToLower(rule.Type)):
		return errors.New("type must either be 'direct_remote_ip', 'remote_ip' or 'source_ip'")
	case len(rule.Cidrs) < 1:
		return errors.New("CIDRs must not be empty")
	case len(rule.Cidrs) > maxACLCIDRs:
		return field.TooMany(field.NewPath("spec", "extensions").Index(i).Child("providerConfig", "rule", "cidrs"), len(rule.Cidrs), maxACLCIDRs)
	}
	for _, cidr := range rule.Cidrs {
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			return err //nolint:wrapcheck // The extension answers with the parser's text verbatim.
		}
	}
	return nil
}

// dnsServiceView is the shoot-dns-service configuration the extension's
// validator sees after its mutator synced the providers from spec.dns: the
// providers and the names of spec.resources.
type dnsServiceView struct {
	providers []dnsv1alpha1.DNSProvider
	resources []string
}

// mutateDNSService mirrors the shoot-dns-service mutator
// (pkg/admission/mutator): for a shoot with spec.dns that is new or being
// reconciled, and whose DNSConfig asks for it (syncProvidersFromShootSpecDNS,
// or no providers), it replaces the providers with those of spec.dns, each
// with the secret shoot-dns-service-<secretName> it adds to spec.resources.
// The simulator does not write this change; it returns what the validator
// then sees (nil if the mutator leaves the shoot alone), or the mutator's
// refusal of a configuration it cannot decode.
func mutateDNSService(shoot *gardencorev1beta1.Shoot) (*dnsServiceView, error) {
	ext := enabledV1Extension(shoot.Spec.Extensions, dnsServiceType)
	if ext == nil || !dnsServiceMutates(shoot) {
		return nil, nil
	}
	var config *dnsv1alpha1.DNSConfig
	if ext.ProviderConfig != nil && ext.ProviderConfig.Raw != nil {
		var err error
		if config, err = decodeDNSConfig(ext.ProviderConfig.Raw, ext.Type); err != nil {
			return nil, deniedForbidden(DNSServiceMutatorWebhook, err)
		}
	}
	sync := config == nil || config.Providers == nil
	if config != nil && config.SyncProvidersFromShootSpecDNS != nil {
		sync = *config.SyncProvidersFromShootSpecDNS
	}
	if !sync {
		return nil, nil
	}
	view := &dnsServiceView{}
	for _, r := range shoot.Spec.Resources {
		view.resources = append(view.resources, r.Name)
	}
	for _, p := range shoot.Spec.DNS.Providers { //nolint:staticcheck // SA1019: the mutator still syncs the deprecated providers.
		np := dnsv1alpha1.DNSProvider{Type: p.Type}
		switch secret := p.SecretName; { //nolint:staticcheck // SA1019: the mutator still reads the deprecated secretName.
		case secret != nil:
			np.SecretName = ptr.To(dnsServiceType + "-" + *secret)
			view.resources = append(view.resources, *np.SecretName)
		case p.CredentialsRef != nil:
			// From Kubernetes 1.35 on the provider has only its credentialsRef.
			np.Credentials = ptr.To(dnsServiceType + "-" + p.CredentialsRef.Name)
			view.resources = append(view.resources, *np.Credentials)
		}
		view.providers = append(view.providers, np)
	}
	return view, nil
}

// dnsServiceMutates mirrors the mutator's conditions: the shoot has
// spec.dns, is not being deleted, and has no last operation or one that is
// a reconciliation or still processing.
func dnsServiceMutates(shoot *gardencorev1beta1.Shoot) bool {
	if shoot.Spec.DNS == nil || shoot.DeletionTimestamp != nil {
		return false
	}
	last := shoot.Status.LastOperation
	return last == nil || last.Type == gardencorev1beta1.LastOperationTypeReconcile || last.State == gardencorev1beta1.LastOperationStateProcessing
}

// validateDNSService mirrors the shoot-dns-service validator
// (pkg/admission/validator and pkg/apis/service/validation): its
// providerConfig must decode, and each provider needs a supported type and a
// secretName or credentials that names an entry of spec.resources.
func (c *check) validateDNSService() error {
	_, ext := enabledExtension(c.shoot.Spec.Extensions, dnsServiceType)
	if ext == nil {
		return nil
	}
	view := c.dnsService
	if view == nil {
		if ext.ProviderConfig == nil {
			return nil
		}
		config, err := decodeDNSConfig(ext.ProviderConfig.Raw, ext.Type)
		if err != nil {
			return err
		}
		view = &dnsServiceView{providers: config.Providers}
		for _, r := range c.shoot.Spec.Resources {
			view.resources = append(view.resources, r.Name)
		}
	}
	return aggregate(validateDNSServiceProviders(view.providers, view.resources))
}

// dnsServiceProviderTypes are the provider types the shoot-dns-service
// extension supports.
var dnsServiceProviderTypes = []string{
	"alicloud-dns", "aws-route53", "azure-dns", "azure-private-dns", "cloudflare-dns", "google-clouddns",
	"infoblox-dns", "netlify-dns", "openstack-designate", "powerdns", "remote", "rfc2136",
}

// validateDNSServiceProviders mirrors validateProviders of the extension.
func validateDNSServiceProviders(providers []dnsv1alpha1.DNSProvider, resources []string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "extensions", "[@.type='"+dnsServiceType+"']", "providerConfig")
	for i, p := range providers {
		pp := path.Index(i)
		switch {
		case ptr.Deref(p.Type, "") == "":
			errs = append(errs, field.Required(pp.Child("type"), "provider type is required"))
		case !slices.Contains(dnsServiceProviderTypes, *p.Type):
			errs = append(errs, field.Invalid(pp.Child("type"), *p.Type, "unsupported provider type. Valid types are: "+strings.Join(dnsServiceProviderTypes, ", ")))
		}
		errs = append(errs, validateDNSServiceCredentials(p, resources, pp)...)
	}
	return errs
}

// validateDNSServiceCredentials mirrors the extension's check of a
// provider's credentials: secretName or credentials, each naming an entry of
// spec.resources.
func validateDNSServiceCredentials(p dnsv1alpha1.DNSProvider, resources []string, path *field.Path) field.ErrorList {
	secret, creds := ptr.Deref(p.SecretName, ""), ptr.Deref(p.Credentials, "")
	if secret == "" && creds == "" {
		const msg = "either secretName or credentials must be provided"
		return field.ErrorList{field.Invalid(path.Child("secretName"), "", msg), field.Invalid(path.Child("credentials"), "", msg)}
	}
	var errs field.ErrorList
	if secret != "" && !slices.Contains(resources, secret) {
		errs = append(errs, field.Invalid(path.Child("secretName"), secret, "secretName is not defined as named resource references at 'spec.resources'"))
	}
	if creds != "" && !slices.Contains(resources, creds) {
		errs = append(errs, field.Invalid(path.Child("credentials"), creds, "credentials is not defined as named resource references at 'spec.resources'"))
	}
	return errs
}

// decodeDNSConfig decodes a DNSConfig as the extension does, with its
// error.
func decodeDNSConfig(raw []byte, extensionType string) (*dnsv1alpha1.DNSConfig, error) {
	config := &dnsv1alpha1.DNSConfig{}
	if _, _, err := dnsServiceDecoder.Decode(raw, nil, config); err != nil {
		return nil, fmt.Errorf("failed to decode %s provider config: %w", extensionType, err)
	}
	return config, nil
}

// enabledExtension is the shoot's extension of the type and its index, if
// it is listed and not disabled; nil otherwise.
func enabledExtension(extensions []gardencore.Extension, typ string) (int, *gardencore.Extension) {
	i := slices.IndexFunc(extensions, func(e gardencore.Extension) bool { return e.Type == typ })
	if i < 0 || ptr.Deref(extensions[i].Disabled, false) {
		return 0, nil
	}
	return i, &extensions[i]
}

// enabledV1Extension is enabledExtension for the v1beta1 shoot.
func enabledV1Extension(extensions []gardencorev1beta1.Extension, typ string) *gardencorev1beta1.Extension {
	i := slices.IndexFunc(extensions, func(e gardencorev1beta1.Extension) bool { return e.Type == typ })
	if i < 0 || ptr.Deref(extensions[i].Disabled, false) {
		return nil
	}
	return &extensions[i]
}
