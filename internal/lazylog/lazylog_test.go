package lazylog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	uberzap "go.uber.org/zap"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// countingSink counts the WithValues calls that reach it.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (c countingSink) WithValues(kv ...any) logr.LogSink {
	*c.withValues++
	return countingSink{LogSink: c.LogSink.WithValues(kv...), withValues: c.withValues}
}

func (c countingSink) WithName(name string) logr.LogSink {
	return countingSink{LogSink: c.LogSink.WithName(name), withValues: c.withValues}
}

// TestPairsWaitForALine: pairs reach the sink below only with a line that is written, in the
// order given, and a logger's pairs never leak into a sibling's.
func TestPairsWaitForALine(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{Verbosity: 0})
	var calls int
	log := Wrap(logr.New(countingSink{LogSink: base.GetSink(), withValues: &calls}))

	runtime := log.WithName("runtime").WithValues("name", "rt-1", "reconcileID", "r1")
	a := runtime.WithValues("step", "ApplyShoot")
	b := runtime.WithValues("step", "ConfigureOIDC")
	a.V(1).Info("not written")
	if calls != 0 {
		t.Fatalf("the sink below got %d WithValues calls before any line was written, want 0", calls)
	}
	if len(lines) != 0 {
		t.Fatalf("a line above the verbosity was written: %q", lines)
	}
	a.Info("applied", "shoot", "s1")
	b.Error(nil, "failed")
	want := []string{
		`runtime "level"=0 "msg"="applied" "name"="rt-1" "reconcileID"="r1" "step"="ApplyShoot" "shoot"="s1"`,
		`runtime "msg"="failed" "error"=null "name"="rt-1" "reconcileID"="r1" "step"="ConfigureOIDC"`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if calls != 2 {
		t.Errorf("the sink below got %d WithValues calls for two lines, want 2", calls)
	}
}

// TestCallerIsTheLoggersCaller: zap, as controller-runtime builds it, with callers (as in its
// development mode) reports the line that logged, not this package.
func TestCallerIsTheLoggersCaller(t *testing.T) {
	var out bytes.Buffer
	plain := zap.New(zap.WriteTo(&out), zap.UseDevMode(false), zap.RawZapOpts(uberzap.AddCaller())).WithValues("a", 1)
	log := Wrap(plain)
	log.WithValues("b", 2).Info("hello")
	plain.Info("plain") // Wrap leaves the logger it was given as it was
	dec := json.NewDecoder(&out)
	for _, want := range []string{"hello", "plain"} {
		var line map[string]any
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("line %q: %v", want, err)
		}
		caller, _ := line["caller"].(string)
		if line["msg"] != want || !strings.HasPrefix(caller, "lazylog/lazylog_test.go:") || line["a"] != float64(1) {
			t.Errorf("line %v: want %q, the caller lazylog/lazylog_test.go and a=1", line, want)
		}
	}
}

// TestWrapTwiceIsOnce: a wrapped logger is not wrapped again.
func TestWrapTwiceIsOnce(t *testing.T) {
	log := Wrap(funcr.New(func(string, string) {}, funcr.Options{}))
	if again := Wrap(log); again.GetSink() != log.GetSink() {
		t.Error("Wrap wrapped a wrapped logger again")
	}
}
