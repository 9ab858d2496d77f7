package retry

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"
)

// Policy is a step's retry policy: exponential backoff with a cap, jitter,
// and a budget of attempts and of time. It is pure: no clock inside, time and
// randomness are passed in, and the caller keeps the attempt count.
//
// Its methods never panic and stay within their documented bounds for any
// attempt number, even for a policy that Validate rejects; a rejected policy's
// delays are just not meaningful.
type Policy struct {
	// Initial is the delay before the first retry (attempt 1).
	Initial time.Duration
	// Factor is the growth per attempt, >= 1.
	Factor float64
	// Cap is the upper bound of any single delay.
	Cap time.Duration
	// MaxAttempts is the number of attempts allowed before exhaustion (>= 1);
	// attempt numbers start at 1.
	MaxAttempts int32
	// MaxDuration is the total time since the first failure before
	// exhaustion; 0 means no limit.
	MaxDuration time.Duration
	// Jitter in [0,1] is the fraction of the delay that is randomised: 1 is
	// AWS "full jitter" (0..d), 0.5 is AWS "equal jitter" (d/2..d), 0 is none.
	// The floor of the jittered delay is (1-Jitter)*d.
	Jitter float64
}

// DefaultPolicy returns the policy of a step that declares none: Initial 5s,
// Factor 2, Cap 10m, MaxAttempts 10, MaxDuration 2h, Jitter 0.5. Equal jitter
// keeps a floor, so a retry never fires immediately, yet spreads a herd of
// runtimes that failed together.
func DefaultPolicy() Policy {
	return Policy{
		Initial:     5 * time.Second,
		Factor:      2,
		Cap:         10 * time.Minute,
		MaxAttempts: 10,
		MaxDuration: 2 * time.Hour,
		Jitter:      0.5,
	}
}

// ErrInvalidPolicy is wrapped by every error that Validate returns.
var ErrInvalidPolicy = errors.New("invalid retry policy")

// Validate returns nil for a usable policy, or an error that wraps
// ErrInvalidPolicy and names every field that is out of range.
func (p Policy) Validate() error {
	var problems []error
	invalid := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrInvalidPolicy}, args...)...))
	}
	if p.Initial <= 0 {
		invalid("initial delay %s must be positive", p.Initial)
	}
	if !(p.Factor >= 1) || math.IsInf(p.Factor, 1) {
		invalid("factor %v must be a finite number >= 1", p.Factor)
	}
	if p.Cap < p.Initial {
		invalid("cap %s must not be below the initial delay %s", p.Cap, p.Initial)
	}
	if p.MaxAttempts < 1 {
		invalid("max attempts %d must be at least 1", p.MaxAttempts)
	}
	if p.MaxDuration < 0 {
		invalid("max duration %s must not be negative (0 means no limit)", p.MaxDuration)
	}
	if !(p.Jitter >= 0 && p.Jitter <= 1) {
		invalid("jitter %v must be within [0, 1]", p.Jitter)
	}
	return errors.Join(problems...)
}

// ceilingPrecision is the mantissa size, in bits, of the arithmetic behind
// Ceiling. It is far above float64's 53 bits, so that the rounding error of
// up to 31 squarings stays below the growth of one attempt even for a factor
// a hair above 1; that makes Ceiling exactly monotone in the attempt number.
const ceilingPrecision = 128

// Ceiling returns the un-jittered delay for attempt n (n >= 1, smaller n
// counts as 1): min(Cap, Initial*Factor^(n-1)), truncated to a nanosecond.
// It never overflows, whatever n up to math.MaxInt32: the power is taken by
// repeated squaring and stops as soon as it is sure to pass Cap.
func (p Policy) Ceiling(attempt int32) time.Duration {
	initial, limit := max(p.Initial, 0), max(p.Cap, 0)
	if initial >= limit {
		return limit
	}
	if attempt <= 1 || !(p.Factor > 1) {
		return initial
	}
	if math.IsInf(p.Factor, 1) {
		return limit
	}
	newFloat := func() *big.Float { return new(big.Float).SetPrec(ceilingPrecision) }
	initialF := newFloat().SetInt64(int64(initial))
	limitF := newFloat().SetInt64(int64(limit))
	acc := newFloat().Set(initialF)
	base := newFloat().SetFloat64(p.Factor)
	scratch := newFloat()
	// acc only ever grows by factors >= 1, and every base still to come is at
	// least the current one, so passing the limit early means passing it.
	for exp := uint32(attempt - 1); exp > 0; exp >>= 1 {
		if exp&1 == 1 {
			if acc.Mul(acc, base).Cmp(limitF) >= 0 {
				return limit
			}
		}
		if exp>>1 == 0 {
			break
		}
		base.Mul(base, base)
		if scratch.Mul(base, initialF).Cmp(limitF) >= 0 {
			return limit
		}
	}
	d, _ := acc.Int64() // acc < limit <= math.MaxInt64, so it fits.
	return time.Duration(d)
}

// Delay returns the jittered delay for attempt n given rnd in [0,1):
// floor + rnd*(ceiling-floor), where ceiling is Ceiling(n) and floor is
// (1-Jitter)*ceiling rounded up to a nanosecond. The result is always within
// [floor, ceiling], so never above Cap and never negative. A rnd outside
// [0,1] (or NaN) is clamped to it; Jitter outside [0,1] likewise (NaN counts
// as 0). The arithmetic is exact, so no rounding pushes a delay past a bound.
func (p Policy) Delay(attempt int32, rnd float64) time.Duration {
	ceiling := p.Ceiling(attempt)
	spread := mulFraction(p.Jitter, int64(ceiling))
	floor := int64(ceiling) - spread
	return time.Duration(floor + mulFraction(rnd, spread))
}

// mulFraction returns floor(x*n) exactly for n >= 0, with x clamped to [0,1]
// (NaN counts as 0). The result is within [0, n].
func mulFraction(x float64, n int64) int64 {
	switch {
	case !(x > 0) || n <= 0:
		return 0
	case x >= 1:
		return n
	}
	// x = mant * 2^-shift exactly, with a 53-bit mant and shift >= 53 since
	// x < 1; mant*n fits in 128 bits.
	frac, exp := math.Frexp(x)
	mant := uint64(frac * (1 << 53))
	shift := uint(53 - exp)
	hi, lo := bits.Mul64(mant, uint64(n))
	switch {
	case shift >= 128:
		return 0
	case shift >= 64:
		return int64(hi >> (shift - 64))
	default:
		return int64(hi<<(64-shift) | lo>>shift)
	}
}

// Exhausted reports whether no further attempt is allowed after attempt
// failures that began at firstFailure, evaluated at now: attempt >=
// MaxAttempts, or MaxDuration > 0 and now.Sub(firstFailure) >= MaxDuration.
// It is monotone: once true, it stays true for a later attempt or a later now.
func (p Policy) Exhausted(attempt int32, firstFailure, now time.Time) bool {
	if attempt >= p.MaxAttempts {
		return true
	}
	return p.MaxDuration > 0 && now.Sub(firstFailure) >= p.MaxDuration
}

// NextRetry returns when the next attempt may run:
// now + max(Delay(attempt, rnd), retryAfter). The result is not clamped to
// MaxDuration; the engine checks Exhausted separately.
func (p Policy) NextRetry(attempt int32, now time.Time, rnd float64, retryAfter time.Duration) time.Time {
	return now.Add(max(p.Delay(attempt, rnd), retryAfter))
}
