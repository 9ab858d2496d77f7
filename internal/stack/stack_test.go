package stack

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStopStopsInReverseOrderAndReportsEachPart checks the order, the reports and the errors of Stop.
func TestStopStopsInReverseOrderAndReportsEachPart(t *testing.T) {
	t.Parallel()
	var stopped, reported []string
	s := &Stack{Report: func(name string, _ time.Duration, err error) {
		if err != nil {
			name += " failed: " + err.Error()
		}
		reported = append(reported, name)
	}}
	stop := func(name string, err error) func() error {
		return func() error {
			if !s.Stopping() {
				t.Errorf("%s: Stopping is false during Stop", name)
			}
			stopped = append(stopped, name)
			return err
		}
	}
	boom := errors.New("boom")
	s.Add("control plane", stop("control plane", nil))
	s.AddQuiet("log file", stop("log file", nil))
	s.AddQuiet("kubeconfig", stop("kubeconfig", boom))
	s.Add("manager", stop("manager", boom))
	if s.Stopping() {
		t.Error("Stopping is true before Stop")
	}

	err := s.Stop()
	if want := []string{"manager", "kubeconfig", "log file", "control plane"}; !slices.Equal(stopped, want) {
		t.Errorf("stopped %v, want %v", stopped, want)
	}
	want := []string{"manager failed: stop manager: boom", "kubeconfig failed: stop kubeconfig: boom", "control plane"}
	if !slices.Equal(reported, want) {
		t.Errorf("reported %q, want %q", reported, want)
	}
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "stop manager: boom") || !strings.Contains(err.Error(), "stop kubeconfig: boom") {
		t.Errorf("Stop returned %v, want both failures", err)
	}
	if err := s.Stop(); err != nil || len(stopped) != 4 {
		t.Errorf("a second Stop stopped again: %v, %v", err, stopped)
	}
}
