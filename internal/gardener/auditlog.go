package gardener

import (
	"errors"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Names of the landscape's audit logging.
const (
	// ExtensionAuditLog is the extension that ships the API server's audit log to the shared
	// audit log service.
	ExtensionAuditLog = "shoot-auditlog-service"
	// AuditLogCredentialsResource is the name under which the Shoot references the audit log
	// tenant's credentials Secret.
	AuditLogCredentialsResource = "auditlog-credentials"
	// ReasonAuditLogError is the reason when a runtime's region has no audit log tenant while
	// audit logging is mandatory; upstream's condition reason.
	ReasonAuditLogError = "AuditLogError"
)

// ErrNoAuditLogTenant means audit logging is mandatory and the runtime's provider and region
// have no tenant.
var ErrNoAuditLogTenant = errors.New("no audit log tenant")

// AuditLog is the shared audit logging of the landscape.
type AuditLog struct {
	// PolicyConfigMapName is the audit policy ConfigMap in the project namespace.
	PolicyConfigMapName string
	// Tenants holds the tenant of each provider type and region.
	Tenants map[string]map[string]AuditLogTenant
	// Mandatory refuses to render a shoot whose provider and region have no tenant.
	Mandatory bool
}

// AuditLogTenant is one tenant of the shared audit log service.
type AuditLogTenant struct {
	TenantID   string
	ServiceURL string
	// SecretName is the Secret with the tenant's credentials in the project namespace.
	SecretName string
}

// tenant returns the audit log tenant of rt's provider and region; nil with no audit logging
// configured, or no tenant when it is optional.
func (a *AuditLog) tenant(rt *infrav1.Runtime) (*AuditLogTenant, error) {
	if a == nil {
		return nil, nil
	}
	provider, region := rt.Spec.Shoot.Provider.Type, rt.Spec.Shoot.Region
	t, ok := a.Tenants[provider][region]
	switch {
	case ok:
		return &t, nil
	case a.Mandatory:
		return nil, retry.Terminal(ReasonAuditLogError, fmt.Errorf(
			"audit logging is mandatory and the landscape has no audit log tenant for provider %s in region %s (spec.shoot.region): %w",
			provider, region, ErrNoAuditLogTenant))
	}
	return nil, nil
}

// auditLogExtension sends the API server's audit log to the tenant, with the credentials the
// Shoot references as AuditLogCredentialsResource.
func auditLogExtension(t *AuditLogTenant) gardencorev1beta1.Extension {
	return gardencorev1beta1.Extension{
		Type: ExtensionAuditLog,
		ProviderConfig: rawJSON(auditLogConfig{
			APIVersion:          "service.auditlog.extensions.gardener.cloud/v1alpha1",
			Kind:                "AuditlogConfig",
			Type:                "standard",
			TenantID:            t.TenantID,
			ServiceURL:          t.ServiceURL,
			SecretReferenceName: AuditLogCredentialsResource,
		}),
	}
}

// auditLogConfig is the shoot-auditlog-service extension's providerConfig.
type auditLogConfig struct {
	APIVersion          string `json:"apiVersion"`
	Kind                string `json:"kind"`
	Type                string `json:"type"`
	TenantID            string `json:"tenantID"`
	ServiceURL          string `json:"serviceURL"`
	SecretReferenceName string `json:"secretReferenceName"`
}
