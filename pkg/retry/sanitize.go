package retry

import (
	"crypto/sha256"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces whatever Sanitize takes for a credential.
const Redacted = "[redacted]"

// ellipsis ends a message that Sanitize cut short.
const ellipsis = "…"

// redaction replaces every match of pattern with replacement, in which $1
// and ${name} refer to submatches as in regexp.Regexp.ReplaceAllString.
type redaction struct {
	pattern     *regexp.Regexp
	replacement string
}

// redactions run in order. PEM blocks go first, because they span lines and
// hold base64; an unterminated block (a message cut inside one) is redacted to
// the end of the message. The other rules take a value only from the line of
// its key: a key that ends its line (a YAML mapping such as "credentials:"
// over "  token: ...") has no value there, and must not swallow the next
// line's key, whose value would then be left in the clear.
var redactions = []redaction{
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*-----.*?-----END [A-Z0-9 ]*-----`), Redacted},
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*-----.*`), Redacted},
	// The userinfo of a URL: https://user:pass@host, https://token@host.
	{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s@]+@`), "${1}" + Redacted + "@"},
	// A bearer token (RFC 6750 token68); short words after "bearer" are prose.
	// Before Authorization headers, which would otherwise take the second word
	// of "Authorization: Bearer Bearer <token>" for the value and leave the token.
	{regexp.MustCompile(`(?i)\b(bearer)[ \t]+[A-Za-z0-9\-._~+/]{8,}=*`), "${1} " + Redacted},
	// An Authorization header value, with or without its scheme.
	{regexp.MustCompile(`(?i)\b(authorization\s*[:=][ \t]*)(?:(?:bearer|basic|digest|negotiate|token)[ \t]+)?[^\s,;"']+`), "${1}" + Redacted},
	// key=value, key: value and "key": "value" where the key names a secret,
	// such as token, id_token, password, client_secret, apiKey.
	{regexp.MustCompile(`(?i)([A-Za-z0-9_\-]*(?:token|password|passwd|pwd|secret|api[_\-]?key|access[_\-]?key|credentials?)["']?\s*[:=][ \t]*)(?:"[^"]*"|'[^']*'|[^\s,;&"'}\]]+)`), "${1}" + Redacted},
}

// base64Run is a run of base64 (standard or URL-safe) with optional padding.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_\-]{40,}={0,2}`)

// minSecretRun is the shortest base64 run that Sanitize redacts.
const minSecretRun = 40

// Sanitize makes an error message fit for a status field, an event or an
// alert. It redacts anything that looks like a credential (bearer tokens,
// Authorization header values, token=, password=, secret= and similar
// key-value pairs, the user and password in a URL, PEM blocks, and base64 runs
// of 40 characters or more that mix upper case, lower case and digits, as
// encoded keys and tokens do and Kubernetes names, paths and UUIDs do not),
// replacing each with "[redacted]". It then replaces invalid UTF-8 with
// U+FFFD, treats control characters as white space, collapses every run of
// white space into one space and trims the ends. Last, it cuts the message to
// at most maxRunes runes, the last of which is "…" when it was cut;
// maxRunes <= 0 gives "". Redaction runs before the cut, so a cut never leaves
// part of a secret behind.
func Sanitize(msg string, maxRunes int) string {
	if len(msg) > memoMaxLen {
		return sanitize(msg, maxRunes)
	}
	key := memoKey{sha256.Sum256([]byte(msg)), maxRunes}
	memo.Lock()
	out, ok := memo.m[key]
	memo.Unlock()
	if ok {
		return out
	}
	out = sanitize(msg, maxRunes)
	memo.Lock()
	if len(memo.m) >= memoMax {
		clear(memo.m)
	}
	memo.m[key] = out
	memo.Unlock()
	return out
}

// memo keeps the results of recent calls of Sanitize. The re-checks of a quiet fleet sanitize
// the same few messages again and again (Gardener's description of a reconciled shoot, a Ready
// condition's message), and running the expressions above was most of what a call cost: about
// 20 µs and a kilobyte of garbage each, more when the collector had emptied regexp's pools. It
// keeps the results for at most memoMax messages of at most memoMaxLen bytes, and starts over
// when full. It keys by the message's digest, so it holds no unredacted text.
var memo = struct {
	sync.Mutex
	m map[memoKey]string
}{m: map[memoKey]string{}}

const (
	memoMax    = 256
	memoMaxLen = 512
)

type memoKey struct {
	digest   [sha256.Size]byte
	maxRunes int
}

// sanitize is Sanitize without the memo.
func sanitize(msg string, maxRunes int) string {
	msg = strings.ToValidUTF8(msg, string(utf8.RuneError))
	for _, r := range redactions {
		msg = r.pattern.ReplaceAllString(msg, r.replacement)
	}
	msg = base64Run.ReplaceAllStringFunc(msg, redactSecretRun)
	msg = strings.Join(strings.FieldsFunc(msg, isSeparator), " ")
	return truncate(msg, maxRunes)
}

// isSeparator is true for white space and for control characters, which are
// dropped like white space.
func isSeparator(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r)
}

// redactSecretRun redacts a long base64 run that mixes upper case, lower case
// and digits, as random bytes encoded in base64 almost always do.
func redactSecretRun(run string) string {
	if len(strings.TrimRight(run, "=")) < minSecretRun {
		return run
	}
	var upper, lower, digit bool
	for _, r := range run {
		upper = upper || (r >= 'A' && r <= 'Z')
		lower = lower || (r >= 'a' && r <= 'z')
		digit = digit || (r >= '0' && r <= '9')
	}
	if upper && lower && digit {
		return Redacted
	}
	return run
}

// truncate cuts s to at most maxRunes runes, ending in an ellipsis when cut.
func truncate(s string, maxRunes int) string {
	if maxRunes <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= maxRunes {
		return s
	}
	cut, runes := 0, 0
	for i := range s {
		if runes == maxRunes-1 {
			cut = i
			break
		}
		runes++
	}
	return s[:cut] + ellipsis
}
