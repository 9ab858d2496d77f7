package retry

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// pemKey is a private key as it might appear in a kubeconfig or a secret.
const pemKey = `-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEA7V2k3l9Xc0bq5mZ1Jc3y8y6G7n5e9QvQy2V6H0sXx3m2mYlF
q1b8m4m3H1p5xk3d9r0b2V4Y6w7J8a9K0L1M2N3O4P5Q6R7S8T9U0V1W2X3Y4Z5a
-----END RSA PRIVATE KEY-----`

// jwt is the shape of a Kubernetes service account token.
const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"

func TestSanitize(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// msg is the raw message.
		msg string
		// max is the rune limit.
		max int
		// want is the sanitized message.
		want string
	}{
		{name: "plain message", msg: "create shoot c-1: the server is unavailable", max: 100, want: "create shoot c-1: the server is unavailable"},
		{name: "empty", msg: "", max: 10, want: ""},
		{name: "collapses white space", msg: "  line one\n\tline   two\r\n", max: 100, want: "line one line two"},
		{name: "control characters count as space", msg: "red\x1b[31m\x00text", max: 100, want: "red [31m text"},
		{name: "invalid UTF-8 becomes U+FFFD", msg: "bad \xff byte", max: 100, want: "bad \uFFFD byte"},
		{
			name: "bearer token",
			msg:  "request with Bearer " + jwt + " was rejected",
			max:  200,
			want: "request with Bearer [redacted] was rejected",
		},
		{
			name: "bearer in lower case",
			msg:  "bearer abcdefgh12345678",
			max:  200,
			want: "bearer [redacted]",
		},
		{
			name: "bearer followed by prose is kept",
			msg:  "bearer token expired",
			max:  200,
			want: "bearer token expired",
		},
		{
			name: "authorization header",
			msg:  "headers: Authorization: Basic dXNlcjpwYXNz, Accept: */*",
			max:  200,
			want: "headers: Authorization: [redacted], Accept: */*",
		},
		{
			name: "token query parameter",
			msg:  "GET https://gardener/api?token=s3cr3t&watch=true failed",
			max:  200,
			want: "GET https://gardener/api?token=[redacted]&watch=true failed",
		},
		{
			name: "access_token and id_token",
			msg:  "access_token=abc123 id_token=def456",
			max:  200,
			want: "access_token=[redacted] id_token=[redacted]",
		},
		{
			name: "password",
			msg:  "login failed for admin password=hunter2; retrying",
			max:  200,
			want: "login failed for admin password=[redacted]; retrying",
		},
		{
			name: "password in upper case with a colon",
			msg:  "PASSWORD: hunter2",
			max:  200,
			want: "PASSWORD: [redacted]",
		},
		{
			name: "quoted secrets in JSON",
			msg:  `body {"clientSecret":"a b c","apiKey": 'xyz',"name":"c-1"}`,
			max:  200,
			want: `body {"clientSecret":[redacted],"apiKey": [redacted],"name":"c-1"}`,
		},
		{
			name: "basic auth in a URL",
			msg:  `Get "https://admin:s3cr3t@api.c-1.kyma.example/api/v1": EOF`,
			max:  200,
			want: `Get "https://[redacted]@api.c-1.kyma.example/api/v1": EOF`,
		},
		{
			name: "token as URL user",
			msg:  "clone https://ghp_abc123@git.example/repo failed",
			max:  200,
			want: "clone https://[redacted]@git.example/repo failed",
		},
		{
			name: "at sign in a URL path is kept",
			msg:  "GET https://host/users/a@b failed",
			max:  200,
			want: "GET https://host/users/a@b failed",
		},
		{
			name: "PEM block",
			msg:  "bad kubeconfig: client-key-data: " + pemKey + " (line 12)",
			max:  200,
			want: "bad kubeconfig: client-key-data: [redacted] (line 12)",
		},
		{
			name: "PEM block cut off",
			msg:  "cert: -----BEGIN CERTIFICATE-----\nMIIB abc",
			max:  200,
			want: "cert: [redacted]",
		},
		{
			name: "long base64 run",
			msg:  "certificate-authority-data LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM1ekNDQWMrZ0F3SUJBZ0lCQURBTkJna3Foa2lH is wrong",
			max:  200,
			want: "certificate-authority-data [redacted] is wrong",
		},
		{
			name: "base64 run just under 40 is kept",
			msg:  "id QWxhZGRpbjpvcGVuIHNlc2FtZQ1234567890Ab end",
			max:  200,
			want: "id QWxhZGRpbjpvcGVuIHNlc2FtZQ1234567890Ab end",
		},
		{
			name: "long lower-case path and UUID are kept",
			msg:  "get /api/v1/namespaces/kcpsystem/runtimes/3f2a1b4c-1234-5678-9abc-def012345678 failed",
			max:  200,
			want: "get /api/v1/namespaces/kcpsystem/runtimes/3f2a1b4c-1234-5678-9abc-def012345678 failed",
		},
		{
			name: "truncates with an ellipsis",
			msg:  "abcdefghij",
			max:  5,
			want: "abcd…",
		},
		{
			name: "exact length is not cut",
			msg:  "abcde",
			max:  5,
			want: "abcde",
		},
		{
			name: "truncates on a multi-byte rune boundary",
			msg:  "Größenänderung fehlgeschlagen",
			max:  6,
			want: "Größe…",
		},
		{
			name: "truncates between emoji",
			msg:  "🚀🚀🚀🚀",
			max:  3,
			want: "🚀🚀…",
		},
		{
			name: "limit of one",
			msg:  "abc",
			max:  1,
			want: "…",
		},
		{
			name: "limit of zero",
			msg:  "abc",
			max:  0,
			want: "",
		},
		{
			name: "redacts before cutting",
			msg:  "password=hunter2hunter2hunter2",
			max:  12,
			want: "password=[r…",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Sanitize(tt.msg, tt.max)
			if got != tt.want {
				t.Errorf("Sanitize(%q, %d): got %q, want %q", tt.msg, tt.max, got, tt.want)
			}
			if again := Sanitize(tt.msg, tt.max); again != tt.want {
				t.Errorf("Sanitize(%q, %d) a second time (remembered): got %q, want %q", tt.msg, tt.max, again, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Sanitize(%q, %d): got invalid UTF-8 %q", tt.msg, tt.max, got)
			}
			if n := utf8.RuneCountInString(got); tt.max > 0 && n > tt.max {
				t.Errorf("Sanitize(%q, %d): got %d runes, want at most %d", tt.msg, tt.max, n, tt.max)
			}
			if strings.Contains(got, "hunter2") || strings.Contains(got, "s3cr3t") {
				t.Errorf("Sanitize(%q, %d): got %q, which leaks a secret", tt.msg, tt.max, got)
			}
		})
	}
}

// TestSanitizeMemoIsBounded: the results Sanitize remembers are kept per message and length,
// never more than memoMax of them, and long messages are not kept at all. (The keys are
// digests, so no message is kept as text.)
func TestSanitizeMemoIsBounded(t *testing.T) {
	long := strings.Repeat("x ", memoMaxLen)
	if got := Sanitize("Shoot c-1 is reconciled", 8); got != "Shoot c…" {
		t.Errorf("cut to 8 runes: %q", got)
	}
	if got := Sanitize("Shoot c-1 is reconciled", 100); got != "Shoot c-1 is reconciled" {
		t.Errorf("the same message with room: %q, want it whole, not the shorter one remembered", got)
	}
	for i := range 3 * memoMax {
		msg := fmt.Sprintf("token=%d-secret", i)
		if got := Sanitize(msg, 100); got != "token=[redacted]" {
			t.Fatalf("Sanitize(%q) = %q", msg, got)
		}
	}
	_ = Sanitize(long, 10)
	memo.Lock()
	defer memo.Unlock()
	if n := len(memo.m); n == 0 || n > memoMax {
		t.Errorf("the memo holds %d results, want some and at most %d", n, memoMax)
	}
	if _, ok := memo.m[memoKey{sha256.Sum256([]byte(long)), 10}]; ok {
		t.Errorf("the memo holds the result of a message of %d bytes, want none over %d", len(long), memoMaxLen)
	}
}

// BenchmarkSanitize compares a message Sanitize has seen (a quiet fleet's re-checks sanitize
// the same few) with one it has not (sanitize, without the memo).
func BenchmarkSanitize(b *testing.B) {
	const msg = "Shoot cluster has been successfully reconciled."
	b.Run("remembered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Sanitize(msg, 1024)
		}
	})
	b.Run("computed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = sanitize(msg, 1024)
		}
	})
}
