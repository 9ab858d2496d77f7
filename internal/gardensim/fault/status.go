package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StatusFor builds the error a Kubernetes API server would send with code
// for req: the reason, message shape and details match what client-go's
// apierrors helpers (IsInternalError, IsServiceUnavailable,
// IsTooManyRequests, SuggestsClientDelay, IsForbidden, IsConflict, ...)
// recognise. An empty message takes a realistic default.
func StatusFor(req Request, code int, message string, retryAfterSeconds int32) *apierrors.StatusError {
	gr := schema.GroupResource{Group: req.Group, Resource: req.Resource}
	msg := func(def string) string {
		if message != "" {
			return message
		}
		return def
	}
	var err *apierrors.StatusError
	switch code {
	case http.StatusInternalServerError:
		err = apierrors.NewInternalError(errors.New(msg("etcdserver: leader changed")))
	case http.StatusServiceUnavailable:
		err = apierrors.NewServiceUnavailable(msg("error trying to reach service: dial tcp 10.0.0.1:443: connect: connection refused"))
	case http.StatusTooManyRequests:
		err = apierrors.NewTooManyRequests(msg("Too many requests, please try again later."), int(retryAfterSeconds))
	case http.StatusForbidden:
		err = apierrors.NewForbidden(gr, req.Name, errors.New(msg(fmt.Sprintf(
			"User %q cannot %s resource %q in API group %q in the namespace %q",
			"simulated-client", req.Verb, req.Resource, req.Group, req.Namespace))))
	case http.StatusConflict:
		err = apierrors.NewConflict(gr, req.Name, errors.New(msg(
			"the object has been modified; please apply your changes to the latest version and try again")))
	case http.StatusNotFound:
		err = apierrors.NewNotFound(gr, req.Name)
	case http.StatusUnauthorized:
		err = apierrors.NewUnauthorized(msg("Unauthorized"))
	case http.StatusBadRequest:
		err = apierrors.NewBadRequest(msg("the request is invalid"))
	case http.StatusGatewayTimeout:
		err = apierrors.NewTimeoutError(msg("request did not complete within requested timeout - context deadline exceeded"), int(retryAfterSeconds))
	default:
		err = apierrors.NewGenericServerResponse(code, req.Verb, gr, req.Name, msg(http.StatusText(code)), int(retryAfterSeconds), false)
	}
	if retryAfterSeconds > 0 {
		if err.ErrStatus.Details == nil {
			err.ErrStatus.Details = &metav1.StatusDetails{}
		}
		err.ErrStatus.Details.RetryAfterSeconds = retryAfterSeconds
	}
	return err
}

// WriteStatus writes status as an API server does: JSON, with the kind set
// and the HTTP code taken from the status.
func WriteStatus(w http.ResponseWriter, status metav1.Status) {
	status.Kind, status.APIVersion = "Status", "v1"
	status.Status = metav1.StatusFailure
	body, err := json.Marshal(status)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

// writeStatusFault answers with the Status fault of hit.
func writeStatusFault(w http.ResponseWriter, req Request, hit Hit) {
	seconds := hit.Fault.retryAfterSeconds(hit.Code)
	if hit.Fault.sendsRetryAfterHeader(hit.Code) {
		w.Header().Set("Retry-After", strconv.Itoa(int(seconds)))
	}
	WriteStatus(w, StatusFor(req, hit.Code, hit.Fault.Message, seconds).ErrStatus)
}
