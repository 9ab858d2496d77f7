package retry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// Classify decides the class of err by type and identity only (errors.As,
// errors.Is and the apierrors helpers), never by message text but for one
// apimachinery error that has no type (apimachineryParseError). It returns the
// zero Classification for a nil error and never panics.
//
// The rules, in order of precedence:
//   - the outermost *Error in the chain, set by a step, wins;
//   - a Kubernetes API status: conflict is Conflict; too many requests, or any
//     status that suggests a client delay of at least a second, is Throttled
//     with that delay; invalid, bad request, method not allowed and entity too
//     large are Terminal (our own generated request was rejected); forbidden,
//     unauthorized, not found, already exists, timeouts and 5xx are Transient
//     with a reason named after the status;
//   - context.Canceled is Transient "Canceled";
//   - context.DeadlineExceeded or any error in the chain whose Timeout method
//     reports true is Transient "Timeout";
//   - *net.OpError, *net.DNSError, *url.Error, refused, reset, aborted or
//     unreachable connections, broken pipes, closed connections, io.EOF and
//     io.ErrUnexpectedEOF are Transient "ConnectionError";
//   - JSON syntax and type errors, apimachinery's typed decode errors and its
//     parse error of a body that is not JSON are Transient "MalformedResponse";
//   - anything else is Transient "Unknown".
func Classify(err error) Classification {
	if err == nil {
		return Classification{}
	}
	if c, ok := classifyMarked(err); ok {
		return c
	}
	for _, classify := range unmarkedClassifiers {
		if c, ok := classify(err); ok {
			return c
		}
	}
	return Classification{Class: ClassTransient, Reason: ReasonUnknown}
}

// unmarkedClassifiers are tried in order after a step's marking; the first
// that recognises the error wins.
var unmarkedClassifiers = []func(error) (Classification, bool){
	classifyStatus,
	classifyCanceled,
	classifyTimeout,
	classifyConnection,
	classifyMalformed,
}

// classifyMarked applies a step's marking, filling the fields the step left
// empty from what its wrapped error would be classified as.
func classifyMarked(err error) (Classification, bool) {
	var marked *Error
	if !errors.As(err, &marked) || marked == nil {
		return Classification{}, false
	}
	inner := Classify(marked.Err)
	c := Classification{Class: marked.Class, Reason: marked.Reason, RetryAfter: max(marked.RetryAfter, 0)}
	if !c.Class.known() {
		c.Class = inner.Class
		if c.Class == "" {
			c.Class = ClassTransient
		}
	}
	if !ValidReason(c.Reason) {
		c.Reason = inner.Reason
		if c.Reason == "" {
			c.Reason = ReasonUnknown
		}
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = inner.RetryAfter
	}
	if !c.Class.Retryable() {
		c.RetryAfter = 0
	}
	return c, true
}

// classifyStatus classifies an error that carries a Kubernetes API status.
func classifyStatus(err error) (Classification, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return Classification{}, false
	}
	delay := suggestedDelay(err)
	if apierrors.IsConflict(err) {
		return Classification{Class: ClassConflict, Reason: ReasonConflict, RetryAfter: delay}, true
	}
	if apierrors.IsTooManyRequests(err) {
		return Classification{Class: ClassThrottled, Reason: ReasonTooManyRequests, RetryAfter: delay}, true
	}
	c := Classification{Class: ClassTransient, Reason: ReasonUnknown}
	for _, rule := range statusRules {
		if rule.matches(err) {
			c = Classification{Class: rule.class, Reason: rule.reason}
			break
		}
	}
	if delay > 0 {
		c.Class, c.RetryAfter = ClassThrottled, delay
	}
	return c, true
}

// suggestedDelay is the delay the server asked for, 0 if none. A server
// timeout "suggests" a delay of 0 seconds; that is no delay.
func suggestedDelay(err error) time.Duration {
	seconds, ok := apierrors.SuggestsClientDelay(err)
	if !ok || seconds <= 0 {
		return 0
	}
	return time.Duration(seconds) * time.Second
}

// statusRule maps one kind of API status to a class and a reason.
type statusRule struct {
	matches func(error) bool
	class   Class
	reason  string
}

// statusRules are tried in order after conflicts and throttling. The
// reason is always one of these constants, never the reason string the
// server sent, which is free text as far as a metric label is concerned.
var statusRules = []statusRule{
	{apierrors.IsInvalid, ClassTerminal, ReasonInvalid},
	{apierrors.IsBadRequest, ClassTerminal, ReasonBadRequest},
	{apierrors.IsMethodNotSupported, ClassTerminal, ReasonMethodNotAllowed},
	{apierrors.IsRequestEntityTooLargeError, ClassTerminal, ReasonRequestEntityTooLarge},
	{apierrors.IsForbidden, ClassTransient, ReasonForbidden},
	{apierrors.IsUnauthorized, ClassTransient, ReasonUnauthorized},
	{apierrors.IsNotFound, ClassTransient, ReasonNotFound},
	{apierrors.IsAlreadyExists, ClassTransient, ReasonAlreadyExists},
	{apierrors.IsServerTimeout, ClassTransient, ReasonTimeout},
	{apierrors.IsTimeout, ClassTransient, ReasonTimeout},
	{apierrors.IsServiceUnavailable, ClassTransient, ReasonServiceUnavailable},
	{apierrors.IsInternalError, ClassTransient, ReasonInternalError},
	{apierrors.IsGone, ClassTransient, ReasonGone},
	{apierrors.IsResourceExpired, ClassTransient, ReasonExpired},
	{apierrors.IsNotAcceptable, ClassTransient, ReasonNotAcceptable},
	{apierrors.IsUnsupportedMediaType, ClassTransient, ReasonUnsupportedMediaType},
	{apierrors.IsStoreReadError, ClassTransient, ReasonStoreReadError},
	{isServerError, ClassTransient, ReasonInternalError},
	{apierrors.IsUnexpectedServerError, ClassTransient, ReasonMalformedResponse},
}

// isServerError reports whether err carries a 5xx status code.
func isServerError(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 500 && code <= 599
}

// classifyCanceled recognises our own cancellation. It runs before the
// network checks, because an HTTP client reports a cancelled request as a
// *url.Error that wraps context.Canceled.
func classifyCanceled(err error) (Classification, bool) {
	if errors.Is(err, context.Canceled) {
		return Classification{Class: ClassTransient, Reason: ReasonCanceled}, true
	}
	return Classification{}, false
}

// timeouter is implemented by net.Error, *url.Error, syscall.Errno,
// os.ErrDeadlineExceeded and context.DeadlineExceeded.
type timeouter interface {
	Timeout() bool
}

// classifyTimeout recognises deadlines and timeouts anywhere in the chain.
// The chain is walked node by node because *url.Error and *net.OpError only
// look one level down when they answer Timeout.
func classifyTimeout(err error) (Classification, bool) {
	if errors.Is(err, context.DeadlineExceeded) || inChain(err, isTimeout) {
		return Classification{Class: ClassTransient, Reason: ReasonTimeout}, true
	}
	return Classification{}, false
}

func isTimeout(err error) bool {
	t, ok := err.(timeouter)
	return ok && t.Timeout()
}

// connectionErrors are the identities of a failed or broken connection.
var connectionErrors = []error{
	syscall.ECONNREFUSED,
	syscall.ECONNRESET,
	syscall.ECONNABORTED,
	syscall.EPIPE,
	syscall.EHOSTUNREACH,
	syscall.ENETUNREACH,
	net.ErrClosed,
	io.ErrUnexpectedEOF,
	io.EOF,
}

// classifyConnection recognises errors of the transport.
func classifyConnection(err error) (Classification, bool) {
	if hasConnectionType(err) {
		return Classification{Class: ClassTransient, Reason: ReasonConnectionError}, true
	}
	for _, target := range connectionErrors {
		if errors.Is(err, target) {
			return Classification{Class: ClassTransient, Reason: ReasonConnectionError}, true
		}
	}
	return Classification{}, false
}

func hasConnectionType(err error) bool {
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		urlErr *url.Error
	)
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.As(err, &urlErr)
}

// classifyMalformed recognises replies that could not be decoded.
func classifyMalformed(err error) (Classification, bool) {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) || inChain(err, isDecodeError) {
		return Classification{Class: ClassTransient, Reason: ReasonMalformedResponse}, true
	}
	return Classification{}, false
}

// apimachineryParseError begins the error apimachinery's JSON serializer
// returns for a body that is not JSON at all. The error is a plain string
// (the parse error is formatted in, not wrapped), so its fixed prefix is the
// only mark it carries: the one message Classify reads.
const apimachineryParseError = "couldn't get version/kind; json parse error"

// isDecodeError recognises apimachinery's typed decode errors, whose Is
// helpers do not unwrap, the syntax errors of sigs.k8s.io/json, whose type is
// internal to that module, and apimachinery's untyped parse error.
func isDecodeError(err error) bool {
	if syntax, _ := kjson.SyntaxErrorOffset(err); syntax {
		return true
	}
	if strings.HasPrefix(err.Error(), apimachineryParseError) {
		return true
	}
	return runtime.IsNotRegisteredError(err) ||
		runtime.IsMissingKind(err) ||
		runtime.IsMissingVersion(err) ||
		runtime.IsStrictDecodingError(err) ||
		apierrors.IsUnexpectedObjectError(err)
}

// maxChainNodes bounds the walk of an error tree. (A cyclic chain would
// already hang errors.Is; the bound only keeps inChain from adding to that.)
const maxChainNodes = 256

// inChain reports whether match holds for err or any error it wraps,
// following both Unwrap() error and Unwrap() []error.
func inChain(err error, match func(error) bool) bool {
	pending := []error{err}
	for visited := 0; len(pending) > 0 && visited < maxChainNodes; visited++ {
		current := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if current == nil {
			continue
		}
		if match(current) {
			return true
		}
		switch wrapper := current.(type) { //nolint:errorlint // unwrapping by hand to walk the tree.
		case interface{ Unwrap() error }:
			pending = append(pending, wrapper.Unwrap())
		case interface{ Unwrap() []error }:
			pending = append(pending, wrapper.Unwrap()...)
		}
	}
	return false
}
