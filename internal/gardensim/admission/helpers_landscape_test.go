package admission_test

import (
	"fmt"
	"net/http"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
)

// Names of the objects a landscape's shoot references, and refusal
// prefixes of the extensions' webhooks.
const (
	dnsSecret      = admissiontest.DNSSecret
	auditSecret    = admissiontest.AuditLogSecret
	customDomain   = "c-1." + admissiontest.DomainPrefix
	aclConfig      = admissiontest.ACLConfig
	awsWorkerIMDS2 = admissiontest.AWSWorkerConfig
	aclDenied      = `admission webhook "validator.gardener-extension-admission-acl.extensions.gardener.cloud" denied the request: `
	dnsDenied      = `admission webhook "validator.admission-shoot-dns-service.extensions.gardener.cloud" denied the request: `
	dnsMutDenied   = `admission webhook "mutator.admission-shoot-dns-service.extensions.gardener.cloud" denied the request: `
)

// extension is admissiontest.Extension.
func extension(typ, config string, disabled bool) gardencorev1beta1.Extension {
	return admissiontest.Extension(typ, config, disabled)
}

// landscape is admissiontest.WithLandscape.
func landscape(s *gardencorev1beta1.Shoot) { admissiontest.WithLandscape(s) }

// landscapeObjects adds the Secrets and the audit policy a landscape's
// shoot references.
func landscapeObjects(e *admissiontest.Env) { e.AddLandscapeObjects(ns) }

// on applies changes in order.
func on(changes ...func(*gardencorev1beta1.Shoot)) func(*gardencorev1beta1.Shoot) {
	return func(s *gardencorev1beta1.Shoot) {
		for _, c := range changes {
			c(s)
		}
	}
}

// repeat is s n times.
func repeat(s string, n int) string { return strings.Repeat(s, n) }

// sprintf is fmt.Sprintf.
func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// forbidden is the refusal of a webhook built on Gardener's extension
// webhook library (admission.Denied): 403 Forbidden.
func forbidden(message string) *refusal {
	return &refusal{code: http.StatusForbidden, reason: "Forbidden", message: message}
}
