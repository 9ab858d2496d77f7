package main

import (
	"runtime/debug"
	"testing"
)

// TestGCPercent: the manager sets its own collector target unless the environment names one.
func TestGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	if !setGCPercent(func(string) (string, bool) { return "", false }) {
		t.Error("without GOGC: not set")
	}
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("the target without GOGC is %d, want %d", got, gcPercent)
	}
	if setGCPercent(func(k string) (string, bool) { return "80", k == "GOGC" }) {
		t.Error("with GOGC: set anyway")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("the target with GOGC is %d, want it left as it was (100)", got)
	}
}
