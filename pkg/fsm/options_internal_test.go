package fsm

import (
	"testing"
	"time"
)

// TestDurationsThatAreNotPositiveKeepTheDefaults checks that a zero or negative duration leaves
// the engine's default in place: a probe or re-check interval of zero would run a Failed or
// Ready object's step again at once, for ever.
func TestDurationsThatAreNotPositiveKeepTheDefaults(t *testing.T) {
	want := defaultConfig()
	for _, d := range []time.Duration{0, -time.Second} {
		got := defaultConfig()
		for _, o := range []Option{WithProbeInterval(d), WithResync(d), WithStepTimeout(d)} {
			o(&got)
		}
		if got.probeInterval != want.probeInterval || got.resync != want.resync || got.stepTimeout != want.stepTimeout {
			t.Errorf("%s: probe %s, resync %s, step timeout %s; want the defaults %s, %s, %s", d,
				got.probeInterval, got.resync, got.stepTimeout, want.probeInterval, want.resync, want.stepTimeout)
		}
	}
	got := defaultConfig()
	WithResync(time.Minute)(&got)
	if got.resync != time.Minute {
		t.Errorf("WithResync(1m) set %s", got.resync)
	}
}
