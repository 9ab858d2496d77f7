package admission

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"
)

// semver is a major.minor.patch version.
type semver struct{ major, minor, patch uint64 }

// parseSemver reads "1.30.5" or "v1.30.5"; missing parts are zero.
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

func (v semver) less(o semver) bool {
	if v.major != o.major {
		return v.major < o.major
	}
	if v.minor != o.minor {
		return v.minor < o.minor
	}
	return v.patch < o.patch
}

// matches reports whether v has the given major and minor; nil matches
// any.
func (v semver) matches(major, minor *uint64) bool {
	return (major == nil || v.major == *major) && (minor == nil || v.minor == *minor)
}

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

// versionLess reports a < b; unparsable versions are an error.
func versionLess(a, b string) (bool, error) {
	va, err := parseSemver(a)
	if err != nil {
		return false, err
	}
	vb, err := parseSemver(b)
	if err != nil {
		return false, err
	}
	return va.less(vb), nil
}

// atLeast reports whether version is at least major.minor; an unparsable
// version is not.
func atLeast(version string, major, minor uint64) bool {
	v, err := parseSemver(version)
	return err == nil && !v.less(semver{major: major, minor: minor})
}

// classification is the lifecycle classification of a version at now, as
// Gardener's CurrentLifecycleClassification computes it.
func classification(v gardencorev1beta1.ExpirableVersion, now time.Time) gardencorev1beta1.VersionClassification {
	stages := v.Lifecycle
	// Profiles without a lifecycle still classify versions the old way,
	// which Gardener reads as a lifecycle.
	legacy, expiration := v.Classification, v.ExpirationDate //nolint:staticcheck // SA1019: Gardener's CurrentLifecycleClassification falls back to the deprecated fields.
	if len(stages) == 0 && (legacy != nil || expiration != nil) {
		stages = append(stages, gardencorev1beta1.LifecycleStage{Classification: ptr.Deref(legacy, gardencorev1beta1.ClassificationSupported)})
		if expiration != nil {
			stages = append(stages, gardencorev1beta1.LifecycleStage{Classification: gardencorev1beta1.ClassificationExpired, StartTime: expiration})
		}
	}
	if len(stages) == 0 {
		return gardencorev1beta1.ClassificationSupported
	}
	current := gardencorev1beta1.ClassificationUnavailable
	for _, s := range stages {
		start := time.Time{}
		if s.StartTime != nil {
			start = s.StartTime.Time
		}
		if start.Before(now) {
			current = s.Classification
		}
	}
	return current
}

// below reports whether version is below major.minor; an unparsable version
// is not, as Gardener's version constraints answer for it.
func below(version string, major, minor uint64) bool {
	v, err := parseSemver(version)
	return err == nil && v.less(semver{major: major, minor: minor})
}
