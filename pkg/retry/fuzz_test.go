package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The fuzz targets of this package. `go test` runs their seeds; `make fuzz` fuzzes each for
// FUZZTIME, and a failing input lands in testdata/fuzz/<target>/, where it stays a seed.

// Shapes of the error that FuzzClassify builds, chosen by its shape argument.
const (
	// shapeStatus is a *apierrors.StatusError with every field of the status fuzzed.
	shapeStatus = iota
	// shapeGeneric is what client-go returns for a reply without a Status body.
	shapeGeneric
	// shapeURL is a *url.Error around a transport error, as net/http returns it.
	shapeURL
	// shapeSyscall is a *net.OpError around a fuzzed errno.
	shapeSyscall
	// shapeDecode is what decoding the message as JSON returns.
	shapeDecode
	// shapePlain is errors.New(message).
	shapePlain
	// shapeJoined is an API status joined with a transport error.
	shapeJoined
	// shapeContext is a cancellation or deadline, plain or inside a *url.Error.
	shapeContext
	// shapes is the number of shapes.
	shapes
)

// Bits of FuzzClassify's flags argument.
const (
	// flagDetails gives a StatusError its Details (kind, name, causes, retry after).
	flagDetails = 1 << iota
	// flagUnexpected makes a generic server response one the client did not expect.
	flagUnexpected
	// flagPost makes a generic server response the reply to a POST (create).
	flagPost
	// flagMark wraps the error in a step's *Error with the fuzzed class, reason and delay.
	flagMark
	// flagMarkNoErr leaves the marking's Err nil.
	flagMarkNoErr
	// flagInnerMark marks the error with a well-formed marking before anything else.
	flagInnerMark
	// flagTimeout makes a DNS error a timeout.
	flagTimeout
	// flagNotFound makes a DNS error a lookup of an unknown host.
	flagNotFound
)

// unmarkedReasons are the reasons Classify gives an error that no step marked: a fixed set of
// constants, whatever the error says.
var unmarkedReasons = []string{
	ReasonUnknown, ReasonCanceled, ReasonTimeout, ReasonConnectionError, ReasonMalformedResponse,
	ReasonInternalError, ReasonServiceUnavailable, ReasonTooManyRequests, ReasonConflict,
	ReasonBadRequest, ReasonInvalid, ReasonMethodNotAllowed, ReasonRequestEntityTooLarge,
	ReasonForbidden, ReasonUnauthorized, ReasonNotFound, ReasonAlreadyExists, ReasonGone,
	ReasonExpired, ReasonNotAcceptable, ReasonUnsupportedMediaType, ReasonStoreReadError,
}

// scenario is the part of a Gardener simulator scenario (internal/gardensim/data/scenarios) that
// seeds the fuzz targets: the API statuses its faults answer with and the outcomes of its shoot
// operations.
type scenario struct {
	Description string `json:"description"`
	Faults      []struct {
		Fault struct {
			Code              int32   `json:"code"`
			Codes             []int32 `json:"codes"`
			RetryAfterSeconds int32   `json:"retryAfterSeconds"`
		} `json:"fault"`
	} `json:"faults"`
	Lifecycle []struct {
		Outcome string   `json:"outcome"`
		Codes   []string `json:"codes"`
	} `json:"lifecycle"`
}

// readScenarios decodes the simulator's scenarios, the repository's fixtures of how Gardener
// fails.
func readScenarios(tb testing.TB) []scenario {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "internal", "gardensim", "data", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no simulator scenarios: %v", err)
	}
	out := make([]scenario, 0, len(files))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		var s scenario
		if err := yaml.Unmarshal(data, &s); err != nil {
			tb.Fatalf("decode %s: %v", file, err)
		}
		out = append(out, s)
	}
	return out
}

// FuzzClassify builds errors the way the manager meets them (API statuses with any code,
// reason, message, details and retry-after, client-go's generic responses, transport, decode
// and context errors, joined errors, steps' markings with any class, reason and delay) and
// checks that Classify always returns a known class with a valid reason; a
// non-negative RetryAfter that is zero for classes that are not retried; the same result twice;
// the same result under fmt.Errorf("...: %w") wrapping; a reason from the fixed set for an
// unmarked error; and, for a marked one, the marking's class, valid reason and delay.
func FuzzClassify(f *testing.F) {
	for _, s := range readScenarios(f) {
		for _, fault := range s.Faults {
			for _, code := range append([]int32{fault.Fault.Code}, fault.Fault.Codes...) {
				if code == 0 {
					continue
				}
				f.Add(uint8(shapeStatus), code, http.StatusText(int(code)), s.Description, fault.Fault.RetryAfterSeconds, uint8(flagDetails), "", "", int64(0))
				f.Add(uint8(shapeGeneric), code, "", s.Description, fault.Fault.RetryAfterSeconds, uint8(flagUnexpected), "", "", int64(0))
			}
		}
	}
	for _, status := range []struct {
		code   int32
		reason metav1.StatusReason
	}{
		{http.StatusConflict, metav1.StatusReasonConflict},
		{http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests},
		{http.StatusUnprocessableEntity, metav1.StatusReasonInvalid},
		{http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{http.StatusForbidden, metav1.StatusReasonForbidden},
		{http.StatusNotFound, metav1.StatusReasonNotFound},
		{http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{http.StatusInternalServerError, metav1.StatusReasonServerTimeout},
		{http.StatusGone, metav1.StatusReasonExpired},
		{0, "ShootIsOnFire"},
	} {
		f.Add(uint8(shapeStatus), status.code, string(status.reason), "the server said no", int32(0), uint8(0), "", "", int64(0))
		f.Add(uint8(shapeStatus), status.code, string(status.reason), "the server said no", int32(3), uint8(flagDetails), "", "", int64(0))
	}
	f.Add(uint8(shapeGeneric), int32(http.StatusConflict), "", "", int32(0), uint8(flagPost|flagUnexpected), "", "", int64(0))
	f.Add(uint8(shapeURL), int32(0), "", "https://gardener/api", int32(0), uint8(flagTimeout), "", "", int64(0))
	f.Add(uint8(shapeURL), int32(4), "", "https://gardener/api", int32(0), uint8(flagNotFound), "", "", int64(0))
	f.Add(uint8(shapeSyscall), int32(syscall.ECONNREFUSED), "dial", "", int32(0), uint8(0), "", "", int64(0))
	f.Add(uint8(shapeDecode), int32(0), "", `{"kind":"Status"`, int32(0), uint8(0), "", "", int64(0))
	f.Add(uint8(shapePlain), int32(0), "", "something odd", int32(0), uint8(0), "", "", int64(0))
	f.Add(uint8(shapeJoined), int32(http.StatusServiceUnavailable), "", "down", int32(10), uint8(flagDetails), "", "", int64(0))
	f.Add(uint8(shapeContext), int32(1), "", "", int32(0), uint8(0), "", "", int64(0))
	f.Add(uint8(shapeStatus), int32(http.StatusTooManyRequests), "TooManyRequests", "slow down", int32(30), uint8(flagDetails|flagMark),
		string(ClassThrottled), "GardenerBusy", int64(time.Minute))
	f.Add(uint8(shapeStatus), int32(http.StatusNotFound), "NotFound", "", int32(0), uint8(flagMark|flagInnerMark),
		"Fatal", "shoot c-1 is not ready", int64(-time.Second))
	f.Add(uint8(shapePlain), int32(0), "", "", int32(0), uint8(flagMark|flagMarkNoErr), string(ClassTerminal), "", int64(0))

	f.Fuzz(func(t *testing.T, shape uint8, code int32, reason, message string, retryAfterSeconds int32, flags uint8,
		markClass, markReason string, markAfter int64,
	) {
		err := fuzzError(shape, code, reason, message, retryAfterSeconds, flags)
		if flags&flagInnerMark != 0 {
			err = innerMarking(code, err)
		}
		var mark *Error
		if flags&flagMark != 0 {
			mark = &Error{Class: Class(markClass), Reason: markReason, RetryAfter: time.Duration(markAfter), Err: err}
			if flags&flagMarkNoErr != 0 {
				mark.Err = nil
			}
			err = mark
		}

		got := Classify(err)
		checkClassification(t, err, got)
		if again := Classify(err); again != got {
			t.Errorf("Classify(%v) is not deterministic: got %+v, then %+v", err, got, again)
		}
		wrapped := err
		for i := range 3 {
			wrapped = fmt.Errorf("layer %d: %w", i, wrapped)
			if c := Classify(wrapped); c != got {
				t.Errorf("Classify(%v): got %+v, want %+v as unwrapped", wrapped, c, got)
			}
		}

		if mark == nil {
			if flags&flagInnerMark == 0 && !slices.Contains(unmarkedReasons, got.Reason) {
				t.Errorf("Classify(%v): reason %q of an unmarked error is not one of the fixed reasons", err, got.Reason)
			}
			return
		}
		if mark.Class.known() && got.Class != mark.Class {
			t.Errorf("Classify(%v): class %q, want the marking's %q", err, got.Class, mark.Class)
		}
		if ValidReason(mark.Reason) && got.Reason != mark.Reason {
			t.Errorf("Classify(%v): reason %q, want the marking's %q", err, got.Reason, mark.Reason)
		}
		if got.Class.Retryable() && mark.RetryAfter > 0 && got.RetryAfter != mark.RetryAfter {
			t.Errorf("Classify(%v): RetryAfter %v, want the marking's %v", err, got.RetryAfter, mark.RetryAfter)
		}
	})
}

// checkClassification checks what holds for the classification of every non-nil error.
func checkClassification(t *testing.T, err error, got Classification) {
	t.Helper()
	if !got.Class.known() {
		t.Errorf("Classify(%v): class %q is not a known class", err, got.Class)
	}
	if !ValidReason(got.Reason) {
		t.Errorf("Classify(%v): reason %q is not a valid reason", err, got.Reason)
	}
	if got.RetryAfter < 0 {
		t.Errorf("Classify(%v): negative RetryAfter %v", err, got.RetryAfter)
	}
	if !got.Class.Retryable() && got.RetryAfter != 0 {
		t.Errorf("Classify(%v): RetryAfter %v for class %q, which is not retried", err, got.RetryAfter, got.Class)
	}
}

// fuzzError builds an unmarked error of the given shape from the fuzzed values.
func fuzzError(shape uint8, code int32, reason, message string, retryAfterSeconds int32, flags uint8) error {
	switch shape % shapes {
	case shapeStatus:
		return statusError(code, reason, message, retryAfterSeconds, flags)
	case shapeGeneric:
		verb := http.MethodPut
		if flags&flagPost != 0 {
			verb = http.MethodPost
		}
		return apierrors.NewGenericServerResponse(int(code), verb, shoots, "c-1", message, int(retryAfterSeconds), flags&flagUnexpected != 0)
	case shapeURL:
		return &url.Error{Op: http.MethodGet, URL: message, Err: transportError(code, message, flags)}
	case shapeSyscall:
		return &net.OpError{Op: reason, Net: "tcp", Err: os.NewSyscallError("connect", syscall.Errno(uint32(code)))}
	case shapeDecode:
		var v map[string]any
		if err := json.Unmarshal([]byte(message), &v); err != nil {
			return fmt.Errorf("decode shoot: %w", err)
		}
		return errors.New(message)
	case shapeJoined:
		return errors.Join(statusError(code, reason, message, retryAfterSeconds, flags), transportError(code, message, flags))
	case shapeContext:
		if code%2 == 0 {
			return &url.Error{Op: http.MethodGet, URL: message, Err: context.Canceled}
		}
		return fmt.Errorf("wait: %w", context.DeadlineExceeded)
	default:
		return errors.New(message)
	}
}

// statusError is an API status with the fuzzed code, reason and message, and with details when
// flags asks for them.
func statusError(code int32, reason, message string, retryAfterSeconds int32, flags uint8) error {
	status := metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  metav1.StatusReason(reason),
		Message: message,
	}
	if flags&flagDetails != 0 {
		status.Details = &metav1.StatusDetails{
			Name:              "c-1",
			Group:             shoots.Group,
			Kind:              "shoots",
			RetryAfterSeconds: retryAfterSeconds,
			Causes:            []metav1.StatusCause{{Type: metav1.CauseType(reason), Message: message, Field: "spec"}},
		}
	}
	return &apierrors.StatusError{ErrStatus: status}
}

// transportError is one of the errors a failed connection produces, chosen by code.
func transportError(code int32, message string, flags uint8) error {
	errs := []error{
		dialRefused(),
		&net.DNSError{Err: message, Name: "gardener", IsTimeout: flags&flagTimeout != 0, IsNotFound: flags&flagNotFound != 0},
		io.EOF,
		fmt.Errorf("read body: %w", io.ErrUnexpectedEOF),
		&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
		fmt.Errorf("write: %w", net.ErrClosed),
		errors.New(message),
		syscall.Errno(uint32(code)),
	}
	return errs[uint32(code)%uint32(len(errs))]
}

// innerMarking marks err with a well-formed marking of a class chosen by code, as a step deeper
// in the call chain would.
func innerMarking(code int32, err error) error {
	marks := []func(string, error) error{Transient, Terminal, Timeout, Conflict, func(reason string, err error) error {
		return Throttled(reason, time.Duration(code)*time.Second, err)
	}}
	return fmt.Errorf("step: %w", marks[uint32(code)%uint32(len(marks))]("InnerReason", err))
}

// Kinds of credential FuzzSanitize plants, chosen by its kind argument.
const (
	// plantBearer is a bearer token in prose.
	plantBearer = iota
	// plantHeader is an Authorization header with a bearer token; in its second variant the
	// client put the scheme twice, as a token that already carries it gets it again.
	plantHeader
	// plantPEM is a PEM private key; the secret is its body.
	plantPEM
	// plantKubeconfig is a token line of a kubeconfig's user: its token, or, in the other
	// variants, the id-token or refresh-token of its OIDC auth provider.
	plantKubeconfig
	// plantNothing plants nothing.
	plantNothing
	// plants is the number of kinds.
	plants
)

// secretMark starts every planted secret, so that it cannot match text around it or
// Redacted by chance.
const secretMark = "zQ9"

// FuzzSanitize plants a credential (a bearer token, an Authorization header, a PEM private key,
// a kubeconfig token) on lines of its own between arbitrary text and checks that Sanitize never lets it through;
// that the result has at most maxRunes runes (none for maxRunes <= 0), is valid UTF-8, is one
// line without control characters, runs of spaces or spaces at its ends; and that a cut result
// is the uncut result cut short with an ellipsis.
func FuzzSanitize(f *testing.F) {
	for _, s := range readScenarios(f) {
		f.Add(s.Description, "", 80, uint8(plantBearer), "")
	}
	f.Add("request with", "was rejected", 200, uint8(plantBearer), jwt)
	f.Add("headers: Authorization: Basic dXNlcjpwYXNz, Accept: */*", "Accept: */*", 200, uint8(plantHeader), "dXNlcjpwYXNz")
	f.Add("bad kubeconfig: client-key-data:", "(line 12)", 200, uint8(plantPEM), "MIIEpAIBAAKCAQEA7V2k3l9Xc0bq5mZ1Jc3y8y6G7n5e9QvQy2V6H0sXx3m2mYlF")
	f.Add("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://api.c-1.kyma.example\n  name: c-1\nusers:\n- name: admin\n  user:",
		"current-context: c-1", 1024, uint8(plantKubeconfig), jwt)
	f.Add("GET https://admin:s3cr3t@gardener/api?token=abc&watch=true", "password=hunter2; retrying", 12, uint8(plantNothing), "")
	f.Add("Größenänderung fehlgeschlagen 🚀\x1b[31m\xff", "\t\r\n", 6, uint8(plantNothing), "")
	f.Add("", "", 0, uint8(plantBearer), "")

	f.Fuzz(func(t *testing.T, before, after string, maxRunes int, kind uint8, secret string) {
		planted, token := plant(kind, secret)
		if token != "" && (strings.Contains(before, token) || strings.Contains(after, token)) {
			t.Skip("the text around the credential holds it too")
		}
		msg := before + "\n" + planted + "\n" + after

		full := Sanitize(msg, math.MaxInt)
		got := Sanitize(msg, maxRunes)
		if again := sanitize(msg, maxRunes); got != again {
			t.Errorf("Sanitize(%q, %d) = %q, but without its memo %q", msg, maxRunes, got, again)
		}
		if token != "" && strings.Contains(full, token) {
			t.Errorf("Sanitize(%q) = %q, which leaks %q", msg, full, token)
		}
		if !utf8.ValidString(full) {
			t.Errorf("Sanitize(%q) = %q, invalid UTF-8", msg, full)
		}
		if strings.TrimSpace(full) != full || strings.Contains(full, "  ") || strings.ContainsFunc(full, isSeparatorButSpace) {
			t.Errorf("Sanitize(%q) = %q, not one line of single spaces", msg, full)
		}
		switch n := utf8.RuneCountInString(full); {
		case maxRunes <= 0:
			if got != "" {
				t.Errorf("Sanitize(%q, %d) = %q, want empty", msg, maxRunes, got)
			}
		case n <= maxRunes:
			if got != full {
				t.Errorf("Sanitize(%q, %d) = %q, want it uncut: %q", msg, maxRunes, got, full)
			}
		default:
			if utf8.RuneCountInString(got) != maxRunes || !strings.HasSuffix(got, ellipsis) ||
				!strings.HasPrefix(full, strings.TrimSuffix(got, ellipsis)) {
				t.Errorf("Sanitize(%q, %d) = %q, want %q cut to %d runes ending in %q", msg, maxRunes, got, full, maxRunes, ellipsis)
			}
		}
	})
}

// isSeparatorButSpace is true for the separators Sanitize must have replaced by a space.
func isSeparatorButSpace(r rune) bool {
	return r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r))
}

// plant returns the text of a credential of the given kind (kind % plants, in the variant
// kind / plants) and the secret in it that must not leak ("" for plantNothing). The secret is
// secretMark followed by raw mapped onto the alphabet of the credential, at least eight
// characters long.
func plant(kind uint8, raw string) (text, secret string) {
	variant := kind / plants
	const (
		token68 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"
		base64  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	)
	alphabet := token68
	if kind%plants == plantPEM {
		alphabet = base64
	}
	var b strings.Builder
	b.WriteString(secretMark)
	for i := range len(raw) {
		b.WriteByte(alphabet[int(raw[i])%len(alphabet)])
	}
	for b.Len() < 8 {
		b.WriteByte('x')
	}
	secret = b.String()

	switch kind % plants {
	case plantBearer:
		return "Bearer " + secret, secret
	case plantHeader:
		scheme := "Bearer "
		if variant%2 == 1 {
			scheme = "Bearer Bearer "
		}
		return "Authorization: " + scheme + secret, secret
	case plantPEM:
		var body strings.Builder
		for line := secret; line != ""; line = line[min(len(line), 64):] {
			body.WriteString(line[:min(len(line), 64)] + "\n")
		}
		// The whole body must not leak, nor any line of it; the first line holds the mark.
		first := secret[:min(len(secret), 64)]
		return "-----BEGIN RSA PRIVATE KEY-----\n" + body.String() + "-----END RSA PRIVATE KEY-----", first
	case plantKubeconfig:
		key := []string{"token", "id-token", "refresh-token"}[variant%3]
		return "    " + key + ": " + secret, secret
	default:
		return "", ""
	}
}
