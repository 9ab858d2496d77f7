package retry

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestDefaultPolicy(t *testing.T) {
	t.Parallel()

	want := Policy{
		Initial:     5 * time.Second,
		Factor:      2,
		Cap:         10 * time.Minute,
		MaxAttempts: 10,
		MaxDuration: 2 * time.Hour,
		Jitter:      0.5,
	}
	if got := DefaultPolicy(); got != want {
		t.Errorf("DefaultPolicy(): got %+v, want %+v", got, want)
	}
	if err := DefaultPolicy().Validate(); err != nil {
		t.Errorf("DefaultPolicy().Validate(): got %v, want nil", err)
	}
}

// withPolicy returns the default policy changed by edit.
func withPolicy(edit func(*Policy)) Policy {
	p := DefaultPolicy()
	edit(&p)
	return p
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the policy.
		name string
		// policy to validate.
		policy Policy
		// problems is how many problems Validate must report; 0 means valid.
		problems int
	}{
		{name: "default", policy: DefaultPolicy()},
		{name: "constant delay", policy: withPolicy(func(p *Policy) { p.Factor, p.Cap = 1, p.Initial })},
		{name: "full jitter", policy: withPolicy(func(p *Policy) { p.Jitter = 1 })},
		{name: "no jitter", policy: withPolicy(func(p *Policy) { p.Jitter = 0 })},
		{name: "no time limit", policy: withPolicy(func(p *Policy) { p.MaxDuration = 0 })},
		{name: "one attempt", policy: withPolicy(func(p *Policy) { p.MaxAttempts = 1 })},
		{name: "factor below 1", policy: withPolicy(func(p *Policy) { p.Factor = 0.5 }), problems: 1},
		{name: "factor NaN", policy: withPolicy(func(p *Policy) { p.Factor = math.NaN() }), problems: 1},
		{name: "factor infinite", policy: withPolicy(func(p *Policy) { p.Factor = math.Inf(1) }), problems: 1},
		{name: "zero initial", policy: withPolicy(func(p *Policy) { p.Initial = 0 }), problems: 1},
		{name: "negative initial", policy: withPolicy(func(p *Policy) { p.Initial = -time.Second }), problems: 1},
		{name: "cap below initial", policy: withPolicy(func(p *Policy) { p.Cap = time.Second }), problems: 1},
		{name: "zero attempts", policy: withPolicy(func(p *Policy) { p.MaxAttempts = 0 }), problems: 1},
		{name: "negative attempts", policy: withPolicy(func(p *Policy) { p.MaxAttempts = -1 }), problems: 1},
		{name: "negative max duration", policy: withPolicy(func(p *Policy) { p.MaxDuration = -time.Second }), problems: 1},
		{name: "jitter below 0", policy: withPolicy(func(p *Policy) { p.Jitter = -0.1 }), problems: 1},
		{name: "jitter above 1", policy: withPolicy(func(p *Policy) { p.Jitter = 1.1 }), problems: 1},
		{name: "jitter NaN", policy: withPolicy(func(p *Policy) { p.Jitter = math.NaN() }), problems: 1},
		{name: "zero policy", policy: Policy{}, problems: 3},
		{
			name:     "everything wrong",
			policy:   Policy{Initial: -1, Factor: 0, Cap: -2, MaxAttempts: 0, MaxDuration: -1, Jitter: 2},
			problems: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.policy.Validate()
			if tt.problems == 0 {
				if err != nil {
					t.Errorf("Validate(%+v): got %v, want nil", tt.policy, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("Validate(%+v): got %v, want an error wrapping ErrInvalidPolicy", tt.policy, err)
			}
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("Validate(%+v): got %T, want joined problems", tt.policy, err)
			}
			if got := len(joined.Unwrap()); got != tt.problems {
				t.Errorf("Validate(%+v): got %d problems (%v), want %d", tt.policy, got, err, tt.problems)
			}
		})
	}
}

func TestPolicyCeiling(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// policy under test.
		policy Policy
		// attempt number.
		attempt int32
		// want is the un-jittered delay.
		want time.Duration
	}{
		{name: "default attempt 0 counts as 1", policy: DefaultPolicy(), attempt: 0, want: 5 * time.Second},
		{name: "default negative attempt counts as 1", policy: DefaultPolicy(), attempt: -7, want: 5 * time.Second},
		{name: "default attempt 1", policy: DefaultPolicy(), attempt: 1, want: 5 * time.Second},
		{name: "default attempt 2", policy: DefaultPolicy(), attempt: 2, want: 10 * time.Second},
		{name: "default attempt 3", policy: DefaultPolicy(), attempt: 3, want: 20 * time.Second},
		{name: "default attempt 7", policy: DefaultPolicy(), attempt: 7, want: 320 * time.Second},
		{name: "default attempt 8 reaches the cap", policy: DefaultPolicy(), attempt: 8, want: 10 * time.Minute},
		{name: "default attempt 10", policy: DefaultPolicy(), attempt: 10, want: 10 * time.Minute},
		{name: "default attempt 64", policy: DefaultPolicy(), attempt: 64, want: 10 * time.Minute},
		{name: "default attempt MaxInt32", policy: DefaultPolicy(), attempt: math.MaxInt32, want: 10 * time.Minute},
		{
			name:    "fractional factor",
			policy:  Policy{Initial: time.Second, Factor: 1.5, Cap: time.Hour},
			attempt: 3,
			want:    2250 * time.Millisecond,
		},
		{
			name:    "factor 1 is constant",
			policy:  Policy{Initial: time.Second, Factor: 1, Cap: time.Hour},
			attempt: math.MaxInt32,
			want:    time.Second,
		},
		{
			name:    "factor a hair above 1 grows slowly",
			policy:  Policy{Initial: time.Second, Factor: 1 + 0x1p-30, Cap: time.Hour},
			attempt: 1<<30 + 1,
			want:    2718281827 * time.Nanosecond, // (1+2^-30)^(2^30) s = e*(1-2^-31) s, truncated.
		},
		{
			name:    "largest cap at the largest attempt",
			policy:  Policy{Initial: time.Nanosecond, Factor: 2, Cap: math.MaxInt64},
			attempt: math.MaxInt32,
			want:    math.MaxInt64,
		},
		{
			name:    "largest cap just before it is reached",
			policy:  Policy{Initial: time.Nanosecond, Factor: 2, Cap: math.MaxInt64},
			attempt: 63,
			want:    1 << 62,
		},
		{
			name:    "cap equals initial",
			policy:  Policy{Initial: time.Minute, Factor: 3, Cap: time.Minute},
			attempt: 5,
			want:    time.Minute,
		},
		{
			name:    "invalid: cap below initial gives cap",
			policy:  Policy{Initial: time.Minute, Factor: 2, Cap: time.Second},
			attempt: 1,
			want:    time.Second,
		},
		{
			name:    "invalid: infinite factor reaches the cap at once",
			policy:  Policy{Initial: time.Second, Factor: math.Inf(1), Cap: time.Hour},
			attempt: 2,
			want:    time.Hour,
		},
		{
			name:    "invalid: NaN factor does not grow",
			policy:  Policy{Initial: time.Second, Factor: math.NaN(), Cap: time.Hour},
			attempt: 9,
			want:    time.Second,
		},
		{
			name:    "invalid: negative initial gives 0",
			policy:  Policy{Initial: -time.Second, Factor: 2, Cap: time.Hour},
			attempt: 9,
			want:    0,
		},
		{
			name:    "invalid: negative cap gives 0",
			policy:  Policy{Initial: time.Second, Factor: 2, Cap: -time.Hour},
			attempt: 9,
			want:    0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.policy.Ceiling(tt.attempt); got != tt.want {
				t.Errorf("Ceiling(%d): got %v, want %v", tt.attempt, got, tt.want)
			}
		})
	}
}

func TestPolicyDelay(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// policy under test.
		policy Policy
		// attempt number.
		attempt int32
		// rnd is the random value in [0,1).
		rnd float64
		// want is the jittered delay.
		want time.Duration
	}{
		{name: "equal jitter at its floor", policy: DefaultPolicy(), attempt: 1, rnd: 0, want: 2500 * time.Millisecond},
		{name: "equal jitter halfway", policy: DefaultPolicy(), attempt: 1, rnd: 0.5, want: 3750 * time.Millisecond},
		{name: "equal jitter near the top", policy: DefaultPolicy(), attempt: 1, rnd: math.Nextafter(1, 0), want: 5*time.Second - time.Nanosecond},
		{name: "equal jitter at the cap", policy: DefaultPolicy(), attempt: 10, rnd: 0, want: 5 * time.Minute},
		{name: "rnd 1 is the ceiling", policy: DefaultPolicy(), attempt: 2, rnd: 1, want: 10 * time.Second},
		{name: "rnd above 1 is clamped", policy: DefaultPolicy(), attempt: 2, rnd: 7, want: 10 * time.Second},
		{name: "negative rnd is clamped", policy: DefaultPolicy(), attempt: 2, rnd: -3, want: 5 * time.Second},
		{name: "NaN rnd counts as 0", policy: DefaultPolicy(), attempt: 2, rnd: math.NaN(), want: 5 * time.Second},
		{name: "infinite rnd is clamped", policy: DefaultPolicy(), attempt: 2, rnd: math.Inf(1), want: 10 * time.Second},
		{
			name:    "no jitter",
			policy:  withPolicy(func(p *Policy) { p.Jitter = 0 }),
			attempt: 3, rnd: 0.9,
			want: 20 * time.Second,
		},
		{
			name:    "full jitter at 0",
			policy:  withPolicy(func(p *Policy) { p.Jitter = 1 }),
			attempt: 3, rnd: 0,
			want: 0,
		},
		{
			name:    "full jitter at a quarter",
			policy:  withPolicy(func(p *Policy) { p.Jitter = 1 }),
			attempt: 3, rnd: 0.25,
			want: 5 * time.Second,
		},
		{
			name:    "floor rounds up to a nanosecond",
			policy:  Policy{Initial: 3, Factor: 1, Cap: 3, Jitter: 0.5},
			attempt: 1, rnd: 0,
			want: 2,
		},
		{
			name:    "largest cap stays exact",
			policy:  Policy{Initial: time.Second, Factor: 2, Cap: math.MaxInt64, Jitter: 0.5},
			attempt: math.MaxInt32, rnd: 0,
			want: math.MaxInt64 - math.MaxInt64/2,
		},
		{
			name:    "invalid: jitter above 1 counts as 1",
			policy:  withPolicy(func(p *Policy) { p.Jitter = 3 }),
			attempt: 1, rnd: 0,
			want: 0,
		},
		{
			name:    "invalid: NaN jitter counts as 0",
			policy:  withPolicy(func(p *Policy) { p.Jitter = math.NaN() }),
			attempt: 1, rnd: 0,
			want: 5 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.policy.Delay(tt.attempt, tt.rnd); got != tt.want {
				t.Errorf("Delay(%d, %v): got %v, want %v", tt.attempt, tt.rnd, got, tt.want)
			}
		})
	}
}

func TestPolicyExhausted(t *testing.T) {
	t.Parallel()

	first := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		// name describes the case.
		name string
		// policy under test.
		policy Policy
		// attempt is the number of failures so far.
		attempt int32
		// elapsed is the time from the first failure to now.
		elapsed time.Duration
		// want is whether the budget is spent.
		want bool
	}{
		{name: "first failure", policy: DefaultPolicy(), attempt: 1, elapsed: 0, want: false},
		{name: "one attempt left", policy: DefaultPolicy(), attempt: 9, elapsed: time.Hour, want: false},
		{name: "attempts spent", policy: DefaultPolicy(), attempt: 10, elapsed: time.Minute, want: true},
		{name: "attempts overspent", policy: DefaultPolicy(), attempt: 11, elapsed: time.Minute, want: true},
		{name: "just within time", policy: DefaultPolicy(), attempt: 2, elapsed: 2*time.Hour - time.Nanosecond, want: false},
		{name: "time spent", policy: DefaultPolicy(), attempt: 2, elapsed: 2 * time.Hour, want: true},
		{name: "time overspent", policy: DefaultPolicy(), attempt: 2, elapsed: 30 * time.Hour, want: true},
		{name: "clock went back", policy: DefaultPolicy(), attempt: 2, elapsed: -time.Hour, want: false},
		{
			name:    "no time limit",
			policy:  withPolicy(func(p *Policy) { p.MaxDuration = 0 }),
			attempt: 2, elapsed: 1000 * time.Hour,
			want: false,
		},
		{
			name:    "single attempt",
			policy:  withPolicy(func(p *Policy) { p.MaxAttempts = 1 }),
			attempt: 1, elapsed: 0,
			want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.policy.Exhausted(tt.attempt, first, first.Add(tt.elapsed)); got != tt.want {
				t.Errorf("Exhausted(%d, +%v): got %v, want %v", tt.attempt, tt.elapsed, got, tt.want)
			}
		})
	}
}

func TestPolicyNextRetry(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		// name describes the case.
		name string
		// attempt number.
		attempt int32
		// rnd is the random value in [0,1).
		rnd float64
		// retryAfter is the delay the server suggested.
		retryAfter time.Duration
		// want is the wait from now.
		want time.Duration
	}{
		{name: "no suggestion", attempt: 1, rnd: 0, retryAfter: 0, want: 2500 * time.Millisecond},
		{name: "suggestion below the delay", attempt: 3, rnd: 0.5, retryAfter: time.Second, want: 15 * time.Second},
		{name: "suggestion above the delay", attempt: 1, rnd: 0.5, retryAfter: time.Minute, want: time.Minute},
		{name: "negative suggestion is ignored", attempt: 1, rnd: 0, retryAfter: -time.Hour, want: 2500 * time.Millisecond},
		{name: "beyond the time budget is not clamped", attempt: 9, rnd: 0, retryAfter: 3 * time.Hour, want: 3 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := DefaultPolicy().NextRetry(tt.attempt, now, tt.rnd, tt.retryAfter)
			if want := now.Add(tt.want); !got.Equal(want) {
				t.Errorf("NextRetry(%d, %v, %v): got %v, want %v", tt.attempt, tt.rnd, tt.retryAfter, got, want)
			}
		})
	}
}

func TestMulFraction(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// x is the fraction.
		x float64
		// n is the whole.
		n int64
		// want is floor(x*n).
		want int64
	}{
		{name: "zero fraction", x: 0, n: 100, want: 0},
		{name: "zero whole", x: 0.5, n: 0, want: 0},
		{name: "half", x: 0.5, n: 101, want: 50},
		{name: "one", x: 1, n: 101, want: 101},
		{name: "largest below one", x: math.Nextafter(1, 0), n: math.MaxInt64, want: math.MaxInt64 - 1024},
		// float64(0.1) is 0.1000000000000000055511151231257827...
		{name: "tenth of the largest", x: 0.1, n: math.MaxInt64, want: 922337203685477631},
		{name: "smallest subnormal", x: math.SmallestNonzeroFloat64, n: math.MaxInt64, want: 0},
		{name: "tiny", x: 0x1p-62, n: math.MaxInt64, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mulFraction(tt.x, tt.n); got != tt.want {
				t.Errorf("mulFraction(%v, %d): got %d, want %d", tt.x, tt.n, got, tt.want)
			}
		})
	}
}

// validPolicy draws a policy that Validate accepts, biased towards the edges:
// a factor of exactly 1 or a hair above it, no or full jitter, caps up to
// math.MaxInt64.
func validPolicy() *rapid.Generator[Policy] {
	return rapid.Custom(func(t *rapid.T) Policy {
		initial := rapid.Int64Range(1, int64(24*time.Hour)).Draw(t, "initial")
		p := Policy{
			Initial: time.Duration(initial),
			Cap:     time.Duration(rapid.Int64Range(initial, math.MaxInt64).Draw(t, "cap")),
			Factor: rapid.OneOf(
				rapid.Just(1.0),
				rapid.Just(math.Nextafter(1, 2)),
				rapid.Float64Range(1, 1.001),
				rapid.Float64Range(1, 10),
			).Draw(t, "factor"),
			MaxAttempts: rapid.Int32Range(1, math.MaxInt32).Draw(t, "maxAttempts"),
			MaxDuration: time.Duration(rapid.Int64Range(0, math.MaxInt64).Draw(t, "maxDuration")),
			Jitter: rapid.OneOf(
				rapid.Just(0.0),
				rapid.Just(0.5),
				rapid.Just(1.0),
				rapid.Float64Range(0, 1),
			).Draw(t, "jitter"),
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("generated policy %+v is invalid: %v", p, err)
		}
		return p
	})
}

// anyAttempt draws an attempt number in [1, math.MaxInt32], biased towards
// small numbers and the largest.
func anyAttempt() *rapid.Generator[int32] {
	return rapid.OneOf(
		rapid.Int32Range(1, 80),
		rapid.Int32Range(1, math.MaxInt32),
		rapid.Int32Range(math.MaxInt32-8, math.MaxInt32),
	)
}

// anyTime draws an instant between 1970 and 2100.
func anyTime(label string) *rapid.Generator[time.Time] {
	return rapid.Custom(func(t *rapid.T) time.Time {
		return time.Unix(0, 0).UTC().Add(time.Duration(rapid.Int64Range(0, 130*365*24*int64(time.Hour)).Draw(t, label)))
	})
}

func TestPropertyDelayWithinBounds(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(t *rapid.T) {
		p := validPolicy().Draw(t, "policy")
		attempt := anyAttempt().Draw(t, "attempt")
		rnd := rapid.Float64Range(0, 1).Draw(t, "rnd")

		ceiling := p.Ceiling(attempt)
		got := p.Delay(attempt, rnd)
		if got < 0 {
			t.Fatalf("Delay(%d, %v) = %v: negative", attempt, rnd, got)
		}
		if got > p.Cap {
			t.Fatalf("Delay(%d, %v) = %v: above the cap %v", attempt, rnd, got, p.Cap)
		}
		if got > ceiling {
			t.Fatalf("Delay(%d, %v) = %v: above the ceiling %v", attempt, rnd, got, ceiling)
		}
		// floor = (1-Jitter)*ceiling, computed exactly; allow 1ns of rounding.
		floor := new(big.Rat).Mul(
			new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).SetFloat64(p.Jitter)),
			new(big.Rat).SetInt64(int64(ceiling)))
		slack := new(big.Rat).Add(new(big.Rat).SetInt64(int64(got)), big.NewRat(1, 1))
		if slack.Cmp(floor) < 0 {
			t.Fatalf("Delay(%d, %v) = %v: below the floor %s ns", attempt, rnd, got, floor.FloatString(1))
		}
	})
}

func TestPropertyDelayClampsAnyRandomValue(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(t *rapid.T) {
		p := validPolicy().Draw(t, "policy")
		attempt := anyAttempt().Draw(t, "attempt")
		rnd := rapid.Float64().Draw(t, "rnd")

		got := p.Delay(attempt, rnd)
		floor := p.Delay(attempt, 0)
		ceiling := p.Ceiling(attempt)
		if got < floor || got > ceiling {
			t.Fatalf("Delay(%d, %v) = %v: outside [%v, %v]", attempt, rnd, got, floor, ceiling)
		}
	})
}

func TestPropertyCeilingMonotone(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(t *rapid.T) {
		p := validPolicy().Draw(t, "policy")
		a := anyAttempt().Draw(t, "a")
		b := rapid.Int32Range(a, math.MaxInt32).Draw(t, "b")

		ca, cb := p.Ceiling(a), p.Ceiling(b)
		if ca > cb {
			t.Fatalf("Ceiling(%d) = %v > Ceiling(%d) = %v", a, ca, b, cb)
		}
		if a < math.MaxInt32 {
			if next := p.Ceiling(a + 1); ca > next {
				t.Fatalf("Ceiling(%d) = %v > Ceiling(%d) = %v", a, ca, a+1, next)
			}
		}
		if ca < p.Initial || ca > p.Cap {
			t.Fatalf("Ceiling(%d) = %v: outside [%v, %v]", a, ca, p.Initial, p.Cap)
		}
	})
}

func TestPropertyNoOverflowAtHugeAttempts(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(t *rapid.T) {
		p := validPolicy().Draw(t, "policy")
		attempt := rapid.Int32Range(math.MaxInt32-1000, math.MaxInt32).Draw(t, "attempt")
		rnd := rapid.Float64Range(0, 1).Draw(t, "rnd")

		ceiling := p.Ceiling(attempt)
		if p.Factor >= 1.001 && ceiling != p.Cap {
			t.Fatalf("Ceiling(%d) = %v with factor %v: want the cap %v", attempt, ceiling, p.Factor, p.Cap)
		}
		if d := p.Delay(attempt, rnd); d < 0 || d > p.Cap {
			t.Fatalf("Delay(%d, %v) = %v: outside [0, %v]", attempt, rnd, d, p.Cap)
		}
	})
}

func TestPropertyExhausted(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(t *rapid.T) {
		p := validPolicy().Draw(t, "policy")
		first := anyTime("first").Draw(t, "first")
		now := anyTime("now").Draw(t, "now")
		later := now.Add(time.Duration(rapid.Int64Range(0, int64(1000*time.Hour)).Draw(t, "wait")))
		attempt := rapid.Int32Range(0, math.MaxInt32).Draw(t, "attempt")
		more := rapid.Int32Range(attempt, math.MaxInt32).Draw(t, "more")

		if attempt >= p.MaxAttempts && !p.Exhausted(attempt, first, now) {
			t.Fatalf("Exhausted(%d) with MaxAttempts %d: got false, want true", attempt, p.MaxAttempts)
		}
		if !p.Exhausted(attempt, first, now) {
			return
		}
		if !p.Exhausted(more, first, now) {
			t.Fatalf("Exhausted(%d) but not Exhausted(%d)", attempt, more)
		}
		if !p.Exhausted(attempt, first, later) {
			t.Fatalf("Exhausted at %v but not at %v", now, later)
		}
	})
}

func TestPropertyNextRetryHonoursRetryAfter(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(t *rapid.T) {
		p := validPolicy().Draw(t, "policy")
		p.Cap = min(p.Cap, 100*365*24*time.Hour) // keep now+delay inside time.Time's range.
		p.Initial = min(p.Initial, p.Cap)
		attempt := anyAttempt().Draw(t, "attempt")
		now := anyTime("now").Draw(t, "now")
		rnd := rapid.Float64Range(0, 1).Draw(t, "rnd")
		retryAfter := time.Duration(rapid.Int64Range(0, int64(365*24*time.Hour)).Draw(t, "retryAfter"))

		got := p.NextRetry(attempt, now, rnd, retryAfter)
		if got.Before(now.Add(retryAfter)) {
			t.Fatalf("NextRetry = %v: before now+retryAfter = %v", got, now.Add(retryAfter))
		}
		if got.Before(now.Add(p.Delay(attempt, 0))) {
			t.Fatalf("NextRetry = %v: before now+floor = %v", got, now.Add(p.Delay(attempt, 0)))
		}
	})
}
