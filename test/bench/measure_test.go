package bench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
)

// perSecond counts the records in each second of [from, to).
func perSecond(records []proxy.RequestRecord, from, to time.Time) []float64 {
	out := make([]float64, int(to.Sub(from).Seconds())+1)
	for _, r := range records {
		i := int(r.Time.Sub(from).Seconds())
		if i >= 0 && i < len(out) {
			out[i]++
		}
	}
	return out
}

// peak is the largest mean of width consecutive values.
func peak(values []float64, width int) float64 {
	best := 0.0
	for _, v := range movingMean(values, width) {
		best = max(best, v)
	}
	return best
}

// movingMean returns the mean of each width consecutive values (fewer at the end).
func movingMean(values []float64, width int) []float64 {
	if width <= 1 {
		return values
	}
	var out []float64
	for i := 0; i+width <= len(values); i++ {
		out = append(out, mean(values[i:i+width]))
	}
	return out
}

func mean(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range values {
		s += v
	}
	return s / float64(len(values))
}

// profileSummary is the top of one pprof profile.
type profileSummary struct {
	title, top string
}

// profileTitles name the profiles the runs take.
var profileTitles = []struct{ file, title, args string }{
	{"p1-*-cpu.pb.gz", "CPU during P1 (the largest run of this manager)", "-top -nodecount=15"},
	{"p4-cpu.pb.gz", "CPU during the P4 window", "-top -nodecount=15"},
	{"p4-heap.pb.gz", "Heap in use at the end of the P4 window", "-top -nodecount=15 -sample_index=inuse_space"},
	{"p4-allocs.pb.gz", "Allocations in the first minute of the P4 window", "-top -nodecount=15 -sample_index=alloc_space"},
}

// summarizeProfiles runs go tool pprof -top on each profile the run took; a profile it cannot
// read is reported and left out.
func summarizeProfiles(ctx context.Context, t *testing.T, dir, bin string) []profileSummary {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	var out []profileSummary
	for _, pt := range profileTitles {
		files, _ := filepath.Glob(filepath.Join(profileDir(dir), pt.file))
		for _, f := range files {
			args := append([]string{"tool", "pprof"}, strings.Fields(pt.args)...)
			args = append(args, bin, f)
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			text, err := exec.CommandContext(ctx, goBin, args...).Output()
			cancel()
			if err != nil {
				t.Errorf("bench: go tool pprof %s: %v", filepath.Base(f), err)
				continue
			}
			out = append(out, profileSummary{title: pt.title, top: trimPprof(string(text))})
		}
	}
	if keepTo := os.Getenv("BENCH_PROFILES"); keepTo != "" {
		files, _ := filepath.Glob(filepath.Join(profileDir(dir), "*.pb.gz"))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil {
				_ = os.WriteFile(filepath.Join(keepTo, filepath.Base(f)), data, 0o644)
			}
		}
	}
	return out
}

// trimPprof drops pprof's header lines about the file and the build.
func trimPprof(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") || strings.HasPrefix(line, "Time:") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// mib is n bytes in MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
