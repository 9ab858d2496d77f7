package admission

import (
	"fmt"
	"strconv"
	"strings"
)

// semver is a major.minor.patch version.
type semver struct{ major, minor, patch uint64 }

// parseSemver reads "1.30.5" or "v1.30.5"; missing parts are zero. The providers' webhooks
// refuse a Kubernetes version they cannot parse.
func parseSemver(s string) (semver, error) {
	parts := strings.SplitN(strings.TrimPrefix(s, "v"), ".", 3)
	var v semver
	for i, p := range parts {
		if i == 2 {
			p, _, _ = strings.Cut(p, "-")
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return semver{}, fmt.Errorf("invalid semantic version %q", s)
		}
		switch i {
		case 0:
			v.major = n
		case 1:
			v.minor = n
		default:
			v.patch = n
		}
	}
	return v, nil
}
