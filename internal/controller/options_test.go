package controller

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestEngineFlags parses the command line into EngineOptions: each flag sets the knob of its
// name, and a bad value is refused with the flag's name.
func TestEngineFlags(t *testing.T) {
	tests := []struct {
		// name describes the case.
		name string
		// args is the command line.
		args []string
		// want is the options after parsing; ignored when wantErr is set.
		want EngineOptions
		// wantErr is a fragment of the parse error; empty means none.
		wantErr string
	}{
		{name: "defaults", want: DefaultEngineOptions()},
		{
			name: "every flag",
			args: []string{"--workers=3", "--retry-initial=1s", "--retry-factor=3", "--retry-cap=1m", "--retry-attempts=4",
				"--retry-max-duration=1h", "--retry-jitter=1", "--failed-probe-interval=2h", "--step-timeout=30s", "--status-requeue-delay=1s"},
			want: EngineOptions{Workers: 3, Retry: retry.Policy{Initial: time.Second, Factor: 3, Cap: time.Minute, MaxAttempts: 4, MaxDuration: time.Hour, Jitter: 1},
				FailedProbeInterval: 2 * time.Hour, StepTimeout: 30 * time.Second, StatusRequeueDelay: time.Second, PollSpread: DefaultEngineOptions().PollSpread},
		},
		{name: "attempts not a number", args: []string{"--retry-attempts=many"}, wantErr: "retry-attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultEngineOptions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			err := fs.Parse(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o, tt.want) {
				t.Errorf("options = %+v, want %+v", o, tt.want)
			}
		})
	}
}

// TestEngineOptionsRefuseABadPolicy names the retry policy when it cannot be used.
func TestEngineOptionsRefuseABadPolicy(t *testing.T) {
	o := DefaultEngineOptions()
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	o.Retry.MaxAttempts = 0
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "retry policy") {
		t.Errorf("error = %v, want one naming the retry policy", err)
	}
}
