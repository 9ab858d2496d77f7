package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// executableReserve is the part of the process's memory limit that the Go collector leaves to
// memory the Go runtime does not count: chiefly the pages of the executable that the process
// maps. A manager that has started and reaches no API server at all already holds about 46 MiB
// of them (/proc/<pid>/smaps: the text, the read-only data and the pc tables of an 87 MB binary;
// the kernel maps the executable in large folios, so most of its text is resident); one that
// re-checks 1,000 or 5,000 Runtimes held 50 to 52 MiB (the benchmark's P4). Those are what
// the kernel leaves mapped when nothing asks it for memory. In a memory cgroup near its limit
// it drops the pages the process no longer touches, most of them read once at the start: at
// 5,000 Runtimes in a 150 MiB cgroup the process kept 16 to 17 MiB of them, and read 25 pages
// back in a 10-minute window (the benchmark's -p4-container-limit). That is no reason for a
// smaller reserve in a container: the start touches far more of the executable (42 MiB of file
// pages resident 15 s after it). With 32 MiB reserved at 5,000 Runtimes in a 150 MiB cgroup,
// the start ran at half speed (the Runtime cache filled in 22 s instead of 11) and /metrics did
// not answer within 10 s, as when the kernel drops pages a process still uses. Nor once the
// start is over: with 56 MiB reserved for the start and 40 MiB from two minutes after the caches
// synced, the start ran at full speed, and /metrics did not answer within 10 s 70 s after the
// reserve shrank, while the first re-checks read every shoot from Gardener.
const executableReserve = 56 << 20

// cgroupFiles are the files that may hold the memory limit of the process's cgroup, given
// /proc/self/cgroup: the cgroup's own file first, then the root's, which is the container's own
// where the container sees only its cgroup. cgroup v2 comes before v1; the v1 file holds a huge
// number when there is no limit.
func cgroupFiles(selfCgroup string) []string {
	var own []string
	for _, line := range strings.Split(selfCgroup, "\n") {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[2] == "/" {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			own = append([]string{filepath.Join(f[2], "memory.max")}, own...)
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			own = append(own, filepath.Join("memory", f[2], "memory.limit_in_bytes"))
		}
	}
	return append(own, "memory.max", "memory/memory.limit_in_bytes")
}

// noCgroupLimit is the smallest v1 value taken as "no limit" (v1 writes about 2^63 rounded to a
// page).
const noCgroupLimit = 1 << 60

// memoryLimit is what the process's memory must stay within and where that came from.
type memoryLimit struct {
	// process is the limit of the whole process; zero means none.
	process int64
	// heap is the Go runtime's soft limit (debug.SetMemoryLimit) derived from it; zero means
	// none.
	heap   int64
	source string
}

// resolveMemoryLimit finds the process's memory limit: --memory-limit (flag, empty when not
// given; "0" means none), else GOMEMLIMIT in the environment (which the Go runtime has applied
// already, so it is reported, not derived), else the limit of the process's cgroup
// (selfCgroup is /proc/self/cgroup) under cgroupRoot. The Go soft limit is the process's limit
// less executableReserve, and at least half of it: the collector then runs harder as the heap
// nears it, instead of letting the process outgrow its container.
func resolveMemoryLimit(flagValue string, lookup func(string) (string, bool), cgroupRoot, selfCgroup string) (memoryLimit, error) {
	if flagValue != "" {
		q, err := resource.ParseQuantity(flagValue)
		if err != nil {
			return memoryLimit{}, fmt.Errorf("--memory-limit %q: %w", flagValue, err)
		}
		if q.Sign() < 0 {
			return memoryLimit{}, fmt.Errorf("--memory-limit %q: negative", flagValue)
		}
		return derived(q.Value(), "--memory-limit"), nil
	}
	if v, set := lookup("GOMEMLIMIT"); set {
		return memoryLimit{heap: debug.SetMemoryLimit(-1), source: "GOMEMLIMIT=" + v}, nil
	}
	for _, name := range cgroupFiles(selfCgroup) {
		path := filepath.Join(cgroupRoot, name)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return memoryLimit{}, fmt.Errorf("cgroup memory limit: %w", err)
		}
		text := strings.TrimSpace(string(raw))
		if text == "max" {
			return memoryLimit{source: path + " (max)"}, nil
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return memoryLimit{}, fmt.Errorf("cgroup memory limit %s: %q: %w", path, text, err)
		}
		if n >= noCgroupLimit {
			return memoryLimit{source: path + " (none)"}, nil
		}
		return derived(n, path), nil
	}
	return memoryLimit{source: "no cgroup memory limit"}, nil
}

// derived is the limit of a process allowed limit bytes (zero: none).
func derived(limit int64, source string) memoryLimit {
	if limit == 0 {
		return memoryLimit{source: source}
	}
	return memoryLimit{process: limit, heap: max(limit-executableReserve, limit/2), source: source}
}

// apply sets the Go runtime's soft limit, unless GOMEMLIMIT has set it already or there is none.
func (l memoryLimit) apply() {
	if l.process > 0 {
		debug.SetMemoryLimit(l.heap)
	}
}
