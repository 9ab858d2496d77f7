package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

var (
	shoots    = schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}
	shootKind = schema.GroupKind{Group: "core.gardener.cloud", Kind: "Shoot"}
)

// jsonSyntaxError is what encoding/json returns for a truncated body.
func jsonSyntaxError() error {
	var v map[string]any
	return json.Unmarshal([]byte("{"), &v)
}

// jsonTypeError is what encoding/json returns for a field of the wrong type.
func jsonTypeError() error {
	var v struct{ Replicas int }
	return json.Unmarshal([]byte(`{"Replicas":"three"}`), &v)
}

// kjsonSyntaxError is what apimachinery's JSON serializer returns for a
// truncated body: a syntax error of a type internal to sigs.k8s.io/json.
func kjsonSyntaxError() error {
	var v map[string]any
	return kjson.UnmarshalCaseSensitivePreserveInts([]byte("{"), &v)
}

// genericResponse builds the error client-go returns for a reply of the given
// code that carried no Status body.
func genericResponse(code int, verb string, retryAfterSeconds int, unexpected bool) error {
	return apierrors.NewGenericServerResponse(code, verb, shoots, "c-1", "upstream said no", retryAfterSeconds, unexpected)
}

// statusWithReason builds a StatusError with a reason string of the server's
// choosing.
func statusWithReason(code int32, reason string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   code,
		Reason: metav1.StatusReason(reason),
	}}
}

func dialRefused() error {
	return &net.OpError{
		Op:  "dial",
		Net: "tcp",
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED),
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()

	invalid := apierrors.NewInvalid(shootKind, "c-1", field.ErrorList{
		field.Required(field.NewPath("spec", "region"), "a region is required"),
	})
	tests := []struct {
		// name describes the error.
		name string
		// err is the error to classify.
		err error
		// want is the expected classification.
		want Classification
	}{
		{name: "nil", err: nil, want: Classification{}},

		// Kubernetes API errors.
		{
			name: "conflict",
			err:  apierrors.NewConflict(shoots, "c-1", errors.New("object was modified")),
			want: Classification{Class: ClassConflict, Reason: ReasonConflict},
		},
		{
			name: "conflict wrapped",
			err:  fmt.Errorf("update shoot c-1: %w", apierrors.NewConflict(shoots, "c-1", errors.New("modified"))),
			want: Classification{Class: ClassConflict, Reason: ReasonConflict},
		},
		{
			name: "conflict wrapped twice",
			err: fmt.Errorf("step patch-shoot: %w",
				fmt.Errorf("update shoot c-1: %w", apierrors.NewConflict(shoots, "c-1", errors.New("modified")))),
			want: Classification{Class: ClassConflict, Reason: ReasonConflict},
		},
		{
			name: "409 without a status body on update",
			err:  genericResponse(http.StatusConflict, http.MethodPut, 0, true),
			want: Classification{Class: ClassConflict, Reason: ReasonConflict},
		},
		{
			name: "409 without a status body on create is already exists",
			err:  genericResponse(http.StatusConflict, http.MethodPost, 0, true),
			want: Classification{Class: ClassTransient, Reason: ReasonAlreadyExists},
		},
		{
			name: "too many requests with retry after",
			err:  apierrors.NewTooManyRequests("slow down", 7),
			want: Classification{Class: ClassThrottled, Reason: ReasonTooManyRequests, RetryAfter: 7 * time.Second},
		},
		{
			name: "too many requests wrapped twice",
			err:  fmt.Errorf("a: %w", fmt.Errorf("b: %w", apierrors.NewTooManyRequests("slow down", 3))),
			want: Classification{Class: ClassThrottled, Reason: ReasonTooManyRequests, RetryAfter: 3 * time.Second},
		},
		{
			name: "too many requests without retry after",
			err:  apierrors.NewTooManyRequestsError("slow down"),
			want: Classification{Class: ClassThrottled, Reason: ReasonTooManyRequests},
		},
		{
			name: "429 without a status body",
			err:  genericResponse(http.StatusTooManyRequests, http.MethodGet, 4, true),
			want: Classification{Class: ClassThrottled, Reason: ReasonTooManyRequests, RetryAfter: 4 * time.Second},
		},
		{
			name: "503 with retry after is throttled",
			err:  genericResponse(http.StatusServiceUnavailable, http.MethodGet, 10, false),
			want: Classification{Class: ClassThrottled, Reason: ReasonServiceUnavailable, RetryAfter: 10 * time.Second},
		},
		{
			name: "generate-name conflict suggests a delay",
			err:  apierrors.NewGenerateNameConflict(shoots, "c-", 1),
			want: Classification{Class: ClassThrottled, Reason: ReasonAlreadyExists, RetryAfter: time.Second},
		},
		{
			name: "invalid",
			err:  invalid,
			want: Classification{Class: ClassTerminal, Reason: ReasonInvalid},
		},
		{
			name: "invalid wrapped",
			err:  fmt.Errorf("create shoot c-1: %w", invalid),
			want: Classification{Class: ClassTerminal, Reason: ReasonInvalid},
		},
		{
			name: "422 without a status body",
			err:  genericResponse(http.StatusUnprocessableEntity, http.MethodPost, 0, true),
			want: Classification{Class: ClassTerminal, Reason: ReasonInvalid},
		},
		{
			name: "bad request",
			err:  apierrors.NewBadRequest("spec.region: unsupported value"),
			want: Classification{Class: ClassTerminal, Reason: ReasonBadRequest},
		},
		{
			name: "method not supported",
			err:  apierrors.NewMethodNotSupported(shoots, "patch"),
			want: Classification{Class: ClassTerminal, Reason: ReasonMethodNotAllowed},
		},
		{
			name: "request entity too large",
			err:  apierrors.NewRequestEntityTooLargeError("limit is 3145728"),
			want: Classification{Class: ClassTerminal, Reason: ReasonRequestEntityTooLarge},
		},
		{
			name: "forbidden",
			err:  apierrors.NewForbidden(shoots, "c-1", errors.New("RBAC: access denied")),
			want: Classification{Class: ClassTransient, Reason: ReasonForbidden},
		},
		{
			name: "unauthorized",
			err:  apierrors.NewUnauthorized("token expired"),
			want: Classification{Class: ClassTransient, Reason: ReasonUnauthorized},
		},
		{
			name: "not found",
			err:  apierrors.NewNotFound(shoots, "c-1"),
			want: Classification{Class: ClassTransient, Reason: ReasonNotFound},
		},
		{
			name: "already exists",
			err:  apierrors.NewAlreadyExists(shoots, "c-1"),
			want: Classification{Class: ClassTransient, Reason: ReasonAlreadyExists},
		},
		{
			name: "timeout error without retry after",
			err:  apierrors.NewTimeoutError("request did not complete", 0),
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "timeout error with retry after is throttled",
			err:  apierrors.NewTimeoutError("request did not complete", 5),
			want: Classification{Class: ClassThrottled, Reason: ReasonTimeout, RetryAfter: 5 * time.Second},
		},
		{
			name: "server timeout without retry after",
			err:  apierrors.NewServerTimeout(shoots, "get", 0),
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "server timeout with retry after is throttled",
			err:  apierrors.NewServerTimeout(shoots, "get", 2),
			want: Classification{Class: ClassThrottled, Reason: ReasonTimeout, RetryAfter: 2 * time.Second},
		},
		{
			name: "internal error",
			err:  apierrors.NewInternalError(errors.New("etcdserver: leader changed")),
			want: Classification{Class: ClassTransient, Reason: ReasonInternalError},
		},
		{
			name: "service unavailable",
			err:  apierrors.NewServiceUnavailable("apiserver is shutting down"),
			want: Classification{Class: ClassTransient, Reason: ReasonServiceUnavailable},
		},
		{
			name: "500 without a status body",
			err:  genericResponse(http.StatusInternalServerError, http.MethodGet, 0, true),
			want: Classification{Class: ClassTransient, Reason: ReasonInternalError},
		},
		{
			name: "502 without a status body",
			err:  genericResponse(http.StatusBadGateway, http.MethodGet, 0, false),
			want: Classification{Class: ClassTransient, Reason: ReasonInternalError},
		},
		{
			name: "502 html page from a proxy",
			err:  genericResponse(http.StatusBadGateway, http.MethodGet, 0, true),
			want: Classification{Class: ClassTransient, Reason: ReasonInternalError},
		},
		{
			name: "503 without a status body",
			err:  genericResponse(http.StatusServiceUnavailable, http.MethodGet, 0, true),
			want: Classification{Class: ClassTransient, Reason: ReasonServiceUnavailable},
		},
		{
			name: "504 without a status body",
			err:  genericResponse(http.StatusGatewayTimeout, http.MethodGet, 0, true),
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "504 wrapped",
			err:  fmt.Errorf("get shoot c-1: %w", genericResponse(http.StatusGatewayTimeout, http.MethodGet, 0, false)),
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "gone",
			err:  &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonGone, Message: "too old resource version"}},
			want: Classification{Class: ClassTransient, Reason: ReasonGone},
		},
		{
			name: "resource expired",
			err:  apierrors.NewResourceExpired("continue token expired"),
			want: Classification{Class: ClassTransient, Reason: ReasonExpired},
		},
		{
			name: "unexpected reply that is not an API status",
			err:  genericResponse(http.StatusTeapot, http.MethodGet, 0, true),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "unknown status code",
			err:  genericResponse(http.StatusTeapot, http.MethodGet, 0, false),
			want: Classification{Class: ClassTransient, Reason: ReasonUnknown},
		},
		{
			name: "server-chosen reason on a 5xx does not leak",
			err:  statusWithReason(599, "ShootIsOnFire"),
			want: Classification{Class: ClassTransient, Reason: ReasonInternalError},
		},
		{
			name: "server-chosen reason without a code does not leak",
			err:  statusWithReason(0, "ShootIsOnFire"),
			want: Classification{Class: ClassTransient, Reason: ReasonUnknown},
		},

		// Transport errors.
		{
			name: "context deadline exceeded",
			err:  context.DeadlineExceeded,
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "context deadline exceeded wrapped twice",
			err:  fmt.Errorf("a: %w", fmt.Errorf("b: %w", context.DeadlineExceeded)),
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "url error around a wrapped deadline",
			err:  &url.Error{Op: "Get", URL: "https://gardener/api", Err: fmt.Errorf("read: %w", context.DeadlineExceeded)},
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "net error that timed out",
			err:  &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "dns lookup that timed out",
			err:  &net.DNSError{Err: "i/o timeout", Name: "gardener", IsTimeout: true},
			want: Classification{Class: ClassTransient, Reason: ReasonTimeout},
		},
		{
			name: "connection refused",
			err:  dialRefused(),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "connection refused inside a url error wrapped twice",
			err: fmt.Errorf("a: %w", fmt.Errorf("b: %w",
				&url.Error{Op: "Get", URL: "https://gardener/api", Err: dialRefused()})),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "bare ECONNREFUSED",
			err:  fmt.Errorf("dial: %w", syscall.ECONNREFUSED),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "bare ECONNRESET",
			err:  fmt.Errorf("read: %w", syscall.ECONNRESET),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "dns lookup failed",
			err:  &net.DNSError{Err: "no such host", Name: "gardener", IsNotFound: true},
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "url error",
			err:  &url.Error{Op: "Post", URL: "https://gardener/api", Err: errors.New("malformed HTTP response")},
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "unexpected EOF",
			err:  fmt.Errorf("read body: %w", io.ErrUnexpectedEOF),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "EOF",
			err:  io.EOF,
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "use of closed connection",
			err:  fmt.Errorf("write: %w", net.ErrClosed),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},
		{
			name: "connection refused among joined errors",
			err:  errors.Join(errors.New("first try"), fmt.Errorf("second try: %w", syscall.ECONNREFUSED)),
			want: Classification{Class: ClassTransient, Reason: ReasonConnectionError},
		},

		// Malformed replies.
		{
			name: "json syntax error",
			err:  jsonSyntaxError(),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "json syntax error wrapped twice",
			err:  fmt.Errorf("a: %w", fmt.Errorf("decode shoot: %w", jsonSyntaxError())),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "a body that is not JSON, as apimachinery's serializer reports it",
			err:  fmt.Errorf("get shoot: %w", apimachineryParseErr()),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "json type error",
			err:  fmt.Errorf("decode: %w", jsonTypeError()),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "sigs.k8s.io/json syntax error wrapped",
			err:  fmt.Errorf("decode: %w", kjsonSyntaxError()),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "kind not registered wrapped",
			err: fmt.Errorf("decode: %w", runtime.NewNotRegisteredErrForKind("scheme",
				schema.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"})),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "missing kind",
			err:  fmt.Errorf("decode: %w", runtime.NewMissingKindErr("{}")),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "missing version",
			err:  runtime.NewMissingVersionErr("{}"),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},
		{
			name: "strict decoding error",
			err:  runtime.NewStrictDecodingError([]error{errors.New(`unknown field "spec.foo"`)}),
			want: Classification{Class: ClassTransient, Reason: ReasonMalformedResponse},
		},

		// Cancellation and the rest.
		{
			name: "context canceled",
			err:  fmt.Errorf("get shoot: %w", context.Canceled),
			want: Classification{Class: ClassTransient, Reason: ReasonCanceled},
		},
		{
			name: "canceled request inside a url error",
			err:  &url.Error{Op: "Get", URL: "https://gardener/api", Err: context.Canceled},
			want: Classification{Class: ClassTransient, Reason: ReasonCanceled},
		},
		{
			name: "unknown error",
			err:  errors.New("something odd"),
			want: Classification{Class: ClassTransient, Reason: ReasonUnknown},
		},
		{
			name: "unknown error wrapped twice",
			err:  fmt.Errorf("a: %w", fmt.Errorf("b: %w", errors.New("something odd"))),
			want: Classification{Class: ClassTransient, Reason: ReasonUnknown},
		},
		{
			name: "message text of a known error is not enough",
			err:  errors.New(syscall.ECONNREFUSED.Error()),
			want: Classification{Class: ClassTransient, Reason: ReasonUnknown},
		},

		// Errors a step marked itself: the marking wins.
		{
			name: "step marks transient",
			err:  Transient("ShootCreateFailed", errors.New("quota check pending")),
			want: Classification{Class: ClassTransient, Reason: "ShootCreateFailed"},
		},
		{
			name: "step marks an internal error terminal",
			err:  Terminal("InvalidShootSpec", apierrors.NewInternalError(errors.New("admission webhook denied"))),
			want: Classification{Class: ClassTerminal, Reason: "InvalidShootSpec"},
		},
		{
			name: "step marks forbidden terminal, wrapped twice",
			err: fmt.Errorf("a: %w", fmt.Errorf("b: %w",
				Terminal("MissingPermission", apierrors.NewForbidden(shoots, "c-1", errors.New("denied"))))),
			want: Classification{Class: ClassTerminal, Reason: "MissingPermission"},
		},
		{
			name: "step marks an invalid reply transient",
			err:  Transient("SeedNotReady", fmt.Errorf("create: %w", invalid)),
			want: Classification{Class: ClassTransient, Reason: "SeedNotReady"},
		},
		{
			name: "step marks a conflict as conflict",
			err:  Conflict("ShootChanged", apierrors.NewInternalError(errors.New("x"))),
			want: Classification{Class: ClassConflict, Reason: "ShootChanged"},
		},
		{
			name: "step marks a timeout",
			err:  Timeout("ShootNotReady", context.DeadlineExceeded),
			want: Classification{Class: ClassTimeout, Reason: "ShootNotReady"},
		},
		{
			name: "step marks throttled with its own delay",
			err:  Throttled("QuotaExceeded", 2*time.Minute, nil),
			want: Classification{Class: ClassThrottled, Reason: "QuotaExceeded", RetryAfter: 2 * time.Minute},
		},
		{
			name: "step marks throttled with a negative delay",
			err:  Throttled("QuotaExceeded", -time.Second, nil),
			want: Classification{Class: ClassThrottled, Reason: "QuotaExceeded"},
		},
		{
			name: "step marking keeps the server's delay",
			err:  Transient("GardenerBusy", apierrors.NewTooManyRequests("slow down", 30)),
			want: Classification{Class: ClassTransient, Reason: "GardenerBusy", RetryAfter: 30 * time.Second},
		},
		{
			name: "step's own delay beats the server's",
			err:  Throttled("GardenerBusy", time.Minute, apierrors.NewTooManyRequests("slow down", 30)),
			want: Classification{Class: ClassThrottled, Reason: "GardenerBusy", RetryAfter: time.Minute},
		},
		{
			name: "terminal drops the server's delay",
			err:  Terminal("QuotaExhausted", apierrors.NewTooManyRequests("slow down", 30)),
			want: Classification{Class: ClassTerminal, Reason: "QuotaExhausted"},
		},
		{
			name: "outer marking beats inner marking",
			err:  Transient("Outer", fmt.Errorf("x: %w", Terminal("Inner", errors.New("y")))),
			want: Classification{Class: ClassTransient, Reason: "Outer"},
		},
		{
			name: "empty reason comes from the wrapped error",
			err:  Terminal("", invalid),
			want: Classification{Class: ClassTerminal, Reason: ReasonInvalid},
		},
		{
			name: "free-text reason is replaced by the wrapped error's",
			err:  Transient("shoot c-1 is not ready: 3 of 5 nodes", apierrors.NewNotFound(shoots, "c-1")),
			want: Classification{Class: ClassTransient, Reason: ReasonNotFound},
		},
		{
			name: "free-text reason without a wrapped error",
			err:  Terminal("bad input", nil),
			want: Classification{Class: ClassTerminal, Reason: ReasonUnknown},
		},
		{
			name: "missing class comes from the wrapped error",
			err:  &Error{Reason: "ShootChanged", Err: apierrors.NewConflict(shoots, "c-1", errors.New("modified"))},
			want: Classification{Class: ClassConflict, Reason: "ShootChanged"},
		},
		{
			name: "unknown class without a wrapped error is transient",
			err:  &Error{Class: "Fatal", Reason: "Custom"},
			want: Classification{Class: ClassTransient, Reason: "Custom"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Classify(tt.err)
			if got != tt.want {
				t.Errorf("Classify(%v): got %+v, want %+v", tt.err, got, tt.want)
			}
			if tt.err == nil {
				return
			}
			if !got.Class.known() {
				t.Errorf("Classify(%v): class %q is not one of the five", tt.err, got.Class)
			}
			if !ValidReason(got.Reason) {
				t.Errorf("Classify(%v): reason %q is not a valid reason", tt.err, got.Reason)
			}
		})
	}
}

func TestClassRetryable(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// class under test.
		class Class
		// want is whether it is retried.
		want bool
	}{
		{class: ClassTransient, want: true},
		{class: ClassThrottled, want: true},
		{class: ClassConflict, want: true},
		{class: ClassTerminal, want: false},
		{class: ClassTimeout, want: false},
		{class: "", want: false},
		{class: "Fatal", want: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.class), func(t *testing.T) {
			t.Parallel()
			if got := tt.class.Retryable(); got != tt.want {
				t.Errorf("%q.Retryable(): got %v, want %v", tt.class, got, tt.want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// err is the marked error.
		err error
		// want is its message.
		want string
	}{
		{name: "reason and error", err: Terminal("InvalidShootSpec", errors.New("region is empty")), want: "InvalidShootSpec: region is empty"},
		{name: "reason only", err: Throttled("QuotaExceeded", time.Minute, nil), want: "QuotaExceeded"},
		{name: "class when no reason", err: &Error{Class: ClassTimeout}, want: "Timeout"},
		{name: "error when no reason nor class", err: &Error{Err: errors.New("boom")}, want: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error(): got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConstructorsWrap(t *testing.T) {
	t.Parallel()

	cause := apierrors.NewNotFound(shoots, "c-1")
	tests := []struct {
		// name of the constructor.
		name string
		// err is what the constructor returned for cause.
		err error
		// class is the class it must set.
		class Class
	}{
		{name: "Transient", err: Transient("R", cause), class: ClassTransient},
		{name: "Throttled", err: Throttled("R", time.Second, cause), class: ClassThrottled},
		{name: "Terminal", err: Terminal("R", cause), class: ClassTerminal},
		{name: "Timeout", err: Timeout("R", cause), class: ClassTimeout},
		{name: "Conflict", err: Conflict("R", cause), class: ClassConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !errors.Is(tt.err, cause) {
				t.Errorf("errors.Is(%v, cause): got false, want true", tt.err)
			}
			if !apierrors.IsNotFound(tt.err) {
				t.Errorf("apierrors.IsNotFound(%v): got false, want true", tt.err)
			}
			var marked *Error
			if !errors.As(tt.err, &marked) {
				t.Fatalf("errors.As(%v, *Error): got false, want true", tt.err)
			}
			if marked.Class != tt.class {
				t.Errorf("class: got %q, want %q", marked.Class, tt.class)
			}
		})
	}
}

func TestValidReason(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// reason under test.
		reason string
		// want is whether it is accepted.
		want bool
	}{
		{reason: "InternalError", want: true},
		{reason: "ERRInfraQuota2", want: true},
		{reason: "X", want: true},
		{reason: "", want: false},
		{reason: "internalError", want: false},
		{reason: "Internal Error", want: false},
		{reason: "Internal_Error", want: false},
		{reason: "Ünicode", want: false},
		{reason: "Abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl", want: true},
		{reason: "Abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			if got := ValidReason(tt.reason); got != tt.want {
				t.Errorf("ValidReason(%q) (len %d): got %v, want %v", tt.reason, len(tt.reason), got, tt.want)
			}
		})
	}
}

// apimachineryParseErr decodes a reply cut off in the middle, as Gardener's client does.
func apimachineryParseErr() error {
	_, _, err := serializer.NewCodecFactory(runtime.NewScheme()).UniversalDeserializer().
		Decode([]byte(`{"kind":"Shoot","apiVersion":"core.gardener.cloud/v1beta1","metadata":{"name":`), nil, nil)
	return err
}
