package admission

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// aggregate is the webhooks' errs.ToAggregate(): nil for no errors, else
// the field errors whose text the webhook denies with.
func aggregate(errs field.ErrorList) error {
	return errs.ToAggregate() //nolint:wrapcheck // The webhook's message is the aggregate's text verbatim, as the extensions return it.
}
