package admission

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthenticationWebhook is the name of the gardener-admission-controller
// webhook that validates structured authentication configurations.
const AuthenticationWebhook = "authentication-configuration.gardener.cloud"

// ProviderWebhook is the name of a provider extension's shoot webhook.
func ProviderWebhook(providerType string) string {
	return fmt.Sprintf("validation.%s.provider.extensions.gardener.cloud", providerType)
}

// denied is how the API server reports a validating webhook's refusal:
// the webhook's code and reason, its message prefixed with the webhook name.
func denied(webhook string, code int32, reason metav1.StatusReason, message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: fmt.Sprintf("admission webhook %q denied the request: %s", webhook, message),
	}}
}

// deniedForbidden is the refusal of a webhook built on Gardener's extension
// webhook library (admission.Denied): 403 Forbidden.
func deniedForbidden(webhook string, err error) error {
	return denied(webhook, http.StatusForbidden, metav1.StatusReasonForbidden, err.Error())
}

// deniedErrored is the refusal of a webhook answering admission.Errored:
// the given code, no reason.
func deniedErrored(webhook string, code int32, err error) error {
	return denied(webhook, code, "", err.Error())
}

// providerWebhook runs the shoot validator of the provider extension that
// serves the shoot's provider type; a type without one is admitted, as
// Gardener admits it when no extension registers a webhook for it.
func (c *check) providerWebhook(context.Context) error {
	if len(c.shoot.Spec.Provider.Workers) == 0 {
		return nil
	}
	v, ok := providers[c.shoot.Spec.Provider.Type]
	if !ok {
		return nil
	}
	if err := v(c); err != nil {
		return deniedForbidden(ProviderWebhook(c.shoot.Spec.Provider.Type), err)
	}
	return nil
}

// providers are the provider extensions' shoot validators by provider
// type. Each returns the error its extension returns.
var providers = map[string]func(*check) error{
	"aws":       validateAWS,
	"azure":     validateAzure,
	"gcp":       validateGCP,
	"openstack": validateOpenStack,
	"alicloud":  validateAlicloud,
}
