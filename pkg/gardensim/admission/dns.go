package admission

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// mutateDNS is the ShootDNS plugin's Admit. On an update that drops the
// primary flag, the provider of the old primary's type and credentials is
// primary again. A shoot bound to a seed gets the default domain if it has
// none and its DNS is managed (an update that drops spec.dns.domain thus
// gets the same domain again) and, unless it uses the default domain, its
// first DNS provider becomes primary if none is.
func mutateDNS(shoot, old *gardencorev1beta1.Shoot, defaultDomain string) {
	restorePrimaryDNSProvider(shoot, old)
	if shoot.Spec.SeedName == nil {
		return
	}
	if !usesUnmanagedDNS(shoot) {
		if shoot.Spec.DNS == nil {
			shoot.Spec.DNS = &gardencorev1beta1.DNS{}
		}
		if defaultDomain != "" && shoot.Spec.DNS.Domain == nil {
			shoot.Spec.DNS.Domain = ptr.To(DefaultDomainFor(shoot, defaultDomain))
		}
	}
	if shoot.Spec.DNS != nil {
		setPrimaryDNSProvider(shoot.Spec.DNS, defaultDomains(defaultDomain))
	}
}

// restorePrimaryDNSProvider marks the provider that matches the old primary
// in type and credentials primary again, if the update dropped the flag.
func restorePrimaryDNSProvider(shoot, old *gardencorev1beta1.Shoot) {
	if old == nil || old.Spec.DNS == nil || shoot.Spec.DNS == nil {
		return
	}
	oldProviders, providers := v1DNSProviders(old.Spec.DNS), v1DNSProviders(shoot.Spec.DNS)
	oldPrimary := primaryV1DNSProvider(oldProviders)
	if oldPrimary < 0 || primaryV1DNSProvider(providers) >= 0 {
		return
	}
	for i := range providers {
		if reflect.DeepEqual(providers[i].Type, oldProviders[oldPrimary].Type) && reflect.DeepEqual(providers[i].CredentialsRef, oldProviders[oldPrimary].CredentialsRef) {
			providers[i].Primary = ptr.To(true) //nolint:staticcheck // SA1019: Gardener's ShootDNS plugin still sets the deprecated primary flag.
			return
		}
	}
}

// setPrimaryDNSProvider makes the first provider primary if none is,
// unless the shoot uses a default domain.
func setPrimaryDNSProvider(dns *gardencorev1beta1.DNS, defaults []string) {
	if dns.Domain != nil && isDefaultDomain(*dns.Domain, defaults) {
		return
	}
	providers := v1DNSProviders(dns)
	if primaryV1DNSProvider(providers) < 0 && len(providers) > 0 {
		providers[0].Primary = ptr.To(true) //nolint:staticcheck // SA1019: Gardener's ShootDNS plugin still sets the deprecated primary flag.
	}
}

// usesUnmanagedDNS mirrors ShootUsesUnmanagedDNS: the primary provider, or
// without one the first provider, is of type unmanaged.
func usesUnmanagedDNS(shoot *gardencorev1beta1.Shoot) bool {
	if shoot.Spec.DNS == nil {
		return false
	}
	providers := v1DNSProviders(shoot.Spec.DNS)
	if i := primaryV1DNSProvider(providers); i >= 0 {
		return ptr.Deref(providers[i].Type, "") == gardencore.DNSUnmanaged
	}
	return len(providers) > 0 && ptr.Deref(providers[0].Type, "") == gardencore.DNSUnmanaged
}

// syncDNSProviderCredentials is the registry strategy's
// SyncDNSProviderCredentials: below Kubernetes 1.35 a provider's secretName
// and a credentialsRef to a Secret are kept in sync.
func syncDNSProviderCredentials(shoot *gardencorev1beta1.Shoot) {
	if shoot.Spec.DNS == nil || atLeast(shoot.Spec.Kubernetes.Version, 1, 35) {
		return
	}
	providers := v1DNSProviders(shoot.Spec.DNS)
	for i := range providers {
		p := &providers[i]
		secretName := p.SecretName //nolint:staticcheck // SA1019: the strategy syncs the deprecated secretName below Kubernetes 1.35.
		switch {
		case secretName != nil && p.CredentialsRef == nil:
			p.CredentialsRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: *secretName}
		case secretName == nil && p.CredentialsRef != nil && p.CredentialsRef.APIVersion == "v1" && p.CredentialsRef.Kind == "Secret":
			p.SecretName = ptr.To(p.CredentialsRef.Name) //nolint:staticcheck // SA1019: the strategy syncs the deprecated secretName below Kubernetes 1.35.
		}
	}
}

// shootDNS is the ShootDNS plugin's Validate: a shoot under a default domain
// may have no primary provider, and a new (or newly set) domain under a
// default domain must be <shoot>.<project>.<default domain>. It answers 422.
func (c *check) shootDNS(context.Context) error {
	defaults := defaultDomains(c.defaultDomain)
	errs := checkPrimaryDNSProvider(c.shoot.Spec.DNS, defaults)
	newDomain := c.op == Create || c.old.Spec.SeedName == nil || !dnsDomainSet(c.old)
	if newDomain && dnsDomainSet(c.shoot) && !usesUnmanagedInternalDNS(c.shoot) {
		errs = append(errs, checkDefaultDomainFormat(c.shoot, defaults)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(shootKind, c.shoot.Name, errs)
	}
	return nil
}

// checkPrimaryDNSProvider: a shoot under a default domain may not name a
// primary provider.
func checkPrimaryDNSProvider(dns *gardencore.DNS, defaults []string) field.ErrorList {
	if dns == nil || dns.Domain == nil || !isDefaultDomain(*dns.Domain, defaults) {
		return nil
	}
	var errs field.ErrorList
	for i, p := range internalDNSProviders(dns) {
		if primary := p.Primary; ptr.Deref(primary, false) { //nolint:staticcheck // SA1019: ShootDNS still reads the deprecated primary flag.
			errs = append(errs, field.Invalid(field.NewPath("spec", "dns", "providers").Index(i).Child("primary"), primary, "primary dns provider must not be set when default domain is used"))
		}
	}
	return errs
}

// checkDefaultDomainFormat: a domain under a default domain must be the
// shoot's own, so that no shoot takes another project's name.
func checkDefaultDomainFormat(shoot *gardencore.Shoot, defaults []string) field.ErrorList {
	domain, project := *shoot.Spec.DNS.Domain, ProjectName(shoot.Namespace)
	path := field.NewPath("spec", "dns", "domain")
	for _, d := range defaults {
		if !strings.HasSuffix(domain, "."+d) {
			continue
		}
		if shoot.GenerateName != "" && (shoot.Name == "" || strings.HasPrefix(shoot.Name, shoot.GenerateName)) {
			if !strings.HasSuffix(domain, fmt.Sprintf(".%s.%s", project, d)) {
				return field.ErrorList{field.Invalid(path, shoot.Spec.DNS.Domain, fmt.Sprintf("shoot with 'metadata.generateName' uses a default domain but does not match expected scheme: <random-subdomain>.<project-name>.<default-domain> (expected '.%s.%s' to be a suffix of '%s')", project, d, domain))}
			}
			return nil
		}
		if want := fmt.Sprintf("%s.%s.%s", shoot.Name, project, d); domain != want {
			return field.ErrorList{field.Invalid(path, shoot.Spec.DNS.Domain, fmt.Sprintf("shoot uses a default domain but does not match expected scheme: <shoot-name>.<project-name>.<default-domain> (expected '%s', but got '%s')", want, domain))}
		}
		return nil
	}
	return nil
}

// credentialConfig identifies a provider's credentials, as validateDNS
// renders a duplicate.
type credentialConfig struct {
	ProviderType string `json:"providerType"`
	GVK          string `json:"gvk"`
	Name         string `json:"name"`
}

// validateDNS mirrors validateDNS of Gardener's API validation.
func validateDNS(dns *gardencore.DNS, version string, path *field.Path) field.ErrorList {
	if dns == nil {
		return nil
	}
	var errs field.ErrorList
	if dns.Domain != nil {
		errs = append(errs, dns1123Subdomain(*dns.Domain, path.Child("domain"))...)
	}
	providers := internalDNSProviders(dns)
	if i := primaryInternalDNSProvider(providers); i >= 0 && providers[i].Type != nil && *providers[i].Type != gardencore.DNSUnmanaged && dns.Domain == nil {
		errs = append(errs, field.Required(path.Child("domain"), fmt.Sprintf("domain must be set when primary provider type is not set to %q", gardencore.DNSUnmanaged)))
	}
	used, primaryFound := sets.New[credentialConfig](), false
	for i, p := range providers {
		pp := path.Child("providers").Index(i)
		if secretName(p) != nil && atLeast(version, 1, 35) {
			errs = append(errs, field.Forbidden(pp.Child("secretName"), "for Kubernetes versions >= 1.35, secretName field is no longer supported"))
		}
		errs = append(errs, validateDNSCredentialsRef(p, version, pp)...)
		perrs, skip := validateDNSProvider(p, pp, used, &primaryFound)
		errs = append(errs, perrs...)
		if !skip && !ptr.Deref(p.Primary, false) && p.CredentialsRef == nil { //nolint:staticcheck // SA1019: Gardener still validates the deprecated primary flag.
			errs = append(errs, field.Required(pp.Child("credentialsRef"), "non-primary DNS providers must specify `credentialsRef`"))
		}
	}
	return errs
}

// validateDNSProvider checks one provider's credentials for duplicates, the
// primary flag for a second primary, and the combination of type and
// credentials. skip reports a check after which Gardener moves on to the
// next provider.
func validateDNSProvider(p gardencore.DNSProvider, path *field.Path, used sets.Set[credentialConfig], primaryFound *bool) (field.ErrorList, bool) {
	if p.CredentialsRef != nil && p.Type != nil {
		cred := credentialConfig{ProviderType: *p.Type, GVK: p.CredentialsRef.APIVersion + "/" + p.CredentialsRef.Kind, Name: p.CredentialsRef.Name}
		if used.Has(cred) {
			return field.ErrorList{field.Invalid(path, cred, "combination of .credentialsRef and .type must be unique across dns providers")}, true
		}
		used.Insert(cred)
	}
	if ptr.Deref(p.Primary, false) { //nolint:staticcheck // SA1019: Gardener still validates the deprecated primary flag.
		if *primaryFound {
			return field.ErrorList{field.Forbidden(path.Child("primary"), "multiple primary DNS providers are not supported")}, true
		}
		*primaryFound = true
	}
	if ptr.Deref(p.Type, "") == gardencore.DNSUnmanaged && p.CredentialsRef != nil {
		return field.ErrorList{field.Invalid(path.Child("credentialsRef"), p.CredentialsRef, fmt.Sprintf("credentialsRef must not be set when type is %q", gardencore.DNSUnmanaged))}, true
	}
	if p.CredentialsRef != nil && p.Type == nil {
		return field.ErrorList{field.Required(path.Child("type"), "type must be set when credentialsRef is set")}, false
	}
	return nil, false
}

// validateDNSCredentialsRef mirrors validateDNSCredentialsRef: below
// Kubernetes 1.35 secretName must name the Secret credentialsRef refers to.
func validateDNSCredentialsRef(p gardencore.DNSProvider, version string, path *field.Path) field.ErrorList {
	name := secretName(p)
	if p.CredentialsRef == nil {
		if name != nil && below(version, 1, 35) {
			return field.ErrorList{field.Forbidden(path.Child("secretName"), "must not be set when `credentialsRef` is not set")}
		}
		return nil
	}
	errs := validateLocalCredentialsRef(*p.CredentialsRef, path.Child("credentialsRef"))
	if p.CredentialsRef.APIVersion == corev1.SchemeGroupVersion.String() && p.CredentialsRef.Kind == "Secret" {
		if below(version, 1, 35) && (name == nil || *name != p.CredentialsRef.Name) {
			errs = append(errs, field.Forbidden(path.Child("secretName"), "must refer to the same secret as `credentialsRef`"))
		}
	} else if ptr.Deref(name, "") != "" {
		errs = append(errs, field.Forbidden(path.Child("secretName"), "must not be set when `credentialsRef` does not refer to secret resource"))
	}
	return errs
}

// credentialsGVKs are the kinds a credentials reference may name.
var credentialsGVKs = []string{
	corev1.SchemeGroupVersion.WithKind("Secret").String(),
	gardencorev1beta1.SchemeGroupVersion.WithKind("InternalSecret").String(),
	securityv1alpha1.SchemeGroupVersion.WithKind("WorkloadIdentity").String(),
}

// validateLocalCredentialsRef mirrors ValidateLocalCredentialsRef.
func validateLocalCredentialsRef(ref autoscalingv1.CrossVersionObjectReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), "must provide an apiVersion"))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "must provide a kind"))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must provide a name"))
	}
	for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), ref.Name, msg))
	}
	obj := corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
	if !sets.New(credentialsGVKs...).Has(obj.GroupVersionKind().String()) {
		errs = append(errs, field.NotSupported(path, obj.String(), credentialsGVKs))
	}
	return errs
}

// validateDNSUpdate mirrors validateDNSUpdate: spec.dns and a set domain
// may not be removed or changed, and once the shoot has a seed its primary
// provider may not lose or change its type.
func validateDNSUpdate(dns, old *gardencore.DNS, seedAssigned bool, path *field.Path) field.ErrorList {
	if old != nil && dns == nil {
		return apivalidation.ValidateImmutableField(dns, old, path)
	}
	if dns == nil || old == nil {
		return nil
	}
	var errs field.ErrorList
	if old.Domain != nil && !reflect.DeepEqual(dns.Domain, old.Domain) {
		errs = append(errs, apivalidation.ValidateImmutableField(dns.Domain, old.Domain, path.Child("domain"))...)
	}
	if seedAssigned {
		errs = append(errs, validatePrimaryDNSProviderUpdate(internalDNSProviders(dns), internalDNSProviders(old), path.Child("providers"))...)
	}
	return errs
}

// validatePrimaryDNSProviderUpdate: a primary provider may not be removed,
// lose its type or change it.
func validatePrimaryDNSProviderUpdate(providers, oldProviders []gardencore.DNSProvider, path *field.Path) field.ErrorList {
	i, j := primaryInternalDNSProvider(oldProviders), primaryInternalDNSProvider(providers)
	switch {
	case i < 0:
		return nil
	case j < 0:
		return field.ErrorList{field.Forbidden(path, "removing a primary provider is not allowed")}
	case oldProviders[i].Type == nil:
		return nil
	case providers[j].Type == nil:
		return field.ErrorList{field.Forbidden(path, "removing the primary provider type is not allowed")}
	case *oldProviders[i].Type != *providers[j].Type:
		return field.ErrorList{field.Forbidden(path, "changing primary provider type is not allowed")}
	}
	return nil
}

// dns1123Subdomain mirrors ValidateDNS1123Subdomain.
func dns1123Subdomain(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// defaultDomains are the garden's default domains: the one given, if any.
func defaultDomains(domain string) []string {
	if domain == "" {
		return nil
	}
	return []string{domain}
}

// isDefaultDomain reports whether domain lies under one of defaults.
func isDefaultDomain(domain string, defaults []string) bool {
	for _, d := range defaults {
		if strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

// dnsDomainSet reports whether the shoot has a DNS domain.
func dnsDomainSet(s *gardencore.Shoot) bool { return s.Spec.DNS != nil && s.Spec.DNS.Domain != nil }

// usesUnmanagedInternalDNS is usesUnmanagedDNS for the internal version.
func usesUnmanagedInternalDNS(s *gardencore.Shoot) bool {
	if s.Spec.DNS == nil {
		return false
	}
	providers := internalDNSProviders(s.Spec.DNS)
	if i := primaryInternalDNSProvider(providers); i >= 0 {
		return ptr.Deref(providers[i].Type, "") == gardencore.DNSUnmanaged
	}
	return len(providers) > 0 && ptr.Deref(providers[0].Type, "") == gardencore.DNSUnmanaged
}

// v1DNSProviders are the providers of spec.dns.
func v1DNSProviders(dns *gardencorev1beta1.DNS) []gardencorev1beta1.DNSProvider {
	return dns.Providers //nolint:staticcheck // SA1019: Gardener still reads and validates the deprecated providers.
}

// internalDNSProviders are the providers of spec.dns.
func internalDNSProviders(dns *gardencore.DNS) []gardencore.DNSProvider {
	return dns.Providers //nolint:staticcheck // SA1019: Gardener still reads and validates the deprecated providers.
}

// primaryV1DNSProvider is the index of the first primary provider; -1 if
// none.
func primaryV1DNSProvider(providers []gardencorev1beta1.DNSProvider) int {
	for i, p := range providers {
		if ptr.Deref(p.Primary, false) { //nolint:staticcheck // SA1019: Gardener still tells the primary provider by the deprecated flag.
			return i
		}
	}
	return -1
}

// primaryInternalDNSProvider is FindPrimaryDNSProvider as an index; -1 if
// none.
func primaryInternalDNSProvider(providers []gardencore.DNSProvider) int {
	for i, p := range providers {
		if ptr.Deref(p.Primary, false) { //nolint:staticcheck // SA1019: Gardener still tells the primary provider by the deprecated flag.
			return i
		}
	}
	return -1
}

// secretName is the provider's deprecated secretName.
func secretName(p gardencore.DNSProvider) *string {
	return p.SecretName //nolint:staticcheck // SA1019: Gardener still validates the deprecated secretName.
}
