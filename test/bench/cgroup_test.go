package bench_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// memoryCgroup is a memory cgroup that P4 runs this manager in when -p4-container-limit is
// set: a container's memory limit as the kernel enforces it. The manager reads the limit from
// its cgroup, as it does in a pod (no --memory-limit). The kernel counts the process's anonymous
// memory and the page cache it brings in, the executable's pages among them, against the limit,
// and reclaims what it can (file pages) before it kills. A cgroup v2 hierarchy is used when
// /sys/fs/cgroup is one with the memory controller, otherwise the v1 memory hierarchy.
type memoryCgroup struct {
	dir   string
	v2    bool
	limit int64
}

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// newMemoryCgroup creates the cgroup name with the memory limit limit (a quantity such as
// 150Mi).
func newMemoryCgroup(name, limit string) (*memoryCgroup, error) {
	q, err := resource.ParseQuantity(limit)
	if err != nil {
		return nil, fmt.Errorf("-p4-container-limit %q: %w", limit, err)
	}
	cg := &memoryCgroup{limit: q.Value()}
	if controllers, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil && strings.Contains(string(controllers), "memory") {
		cg.v2, cg.dir = true, filepath.Join(cgroupRoot, name)
	} else if _, err := os.Stat(filepath.Join(cgroupRoot, "memory", "memory.limit_in_bytes")); err == nil {
		cg.dir = filepath.Join(cgroupRoot, "memory", name)
	} else {
		return nil, fmt.Errorf("-p4-container-limit: no memory controller under %s (neither cgroup v2 with memory nor the v1 memory hierarchy)", cgroupRoot)
	}
	if err := os.Mkdir(cg.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("-p4-container-limit: create the cgroup (it needs root): %w", err)
	}
	if err := cg.write(cg.file("memory.max", "memory.limit_in_bytes"), strconv.FormatInt(cg.limit, 10)); err != nil {
		_ = cg.remove()
		return nil, err
	}
	return cg, nil
}

// file is the name of a file of the cgroup: v2's or v1's.
func (cg *memoryCgroup) file(v2, v1 string) string {
	if cg.v2 {
		return filepath.Join(cg.dir, v2)
	}
	return filepath.Join(cg.dir, v1)
}

func (cg *memoryCgroup) write(file, value string) error {
	if err := os.WriteFile(file, []byte(value), 0); err != nil {
		return fmt.Errorf("cgroup: write %s: %w", file, err)
	}
	return nil
}

// command returns bin and args as a command that joins the cgroup before it becomes bin: a
// shell writes its own pid into the cgroup and execs bin, so the process is in the cgroup from
// its first page and keeps the pid the bench started.
func (cg *memoryCgroup) command(bin string, args []string) (string, []string) {
	return "/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg.dir, bin}, args...)
}

// uncache drops bin's pages from the page cache, so that the process in the cgroup reads
// them in again and they are charged to it, as a container's executable is: pages someone else
// read first stay charged to that cgroup, and would not count against the limit.
func uncache(bin string) error {
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", bin, err)
	}
	return nil
}

// resetPeak starts the cgroup's peak usage afresh (v1 only: v2's memory.peak is since the
// cgroup was created, which the report says).
func (cg *memoryCgroup) resetPeak() error {
	if cg.v2 {
		return nil
	}
	return cg.write(cg.file("", "memory.max_usage_in_bytes"), "0")
}

// cgroupReading is the kernel's account of the cgroup at one moment.
type cgroupReading struct {
	// usage is the memory charged now; peak the most since the cgroup was created or since
	// resetPeak (v1).
	usage, peak int64
	// workingSet is usage less the inactive file pages: what the kubelet reports as a
	// container's working set and weighs against its limit.
	workingSet int64
	// limitHits counts the charges that met the limit (v1 memory.failcnt, v2 the max events):
	// each made the kernel reclaim first. oomKills counts the processes the cgroup's OOM killer
	// killed.
	limitHits, oomKills int64
}

// read reads the cgroup's account.
func (cg *memoryCgroup) read() (cgroupReading, error) {
	var r cgroupReading
	var err error
	if r.usage, err = cg.readInt(cg.file("memory.current", "memory.usage_in_bytes")); err != nil {
		return r, err
	}
	if r.peak, err = cg.readInt(cg.file("memory.peak", "memory.max_usage_in_bytes")); err != nil {
		return r, err
	}
	stat, err := cg.readKeyed(cg.file("memory.stat", "memory.stat"))
	if err != nil {
		return r, err
	}
	inactive := stat["inactive_file"]
	if v, ok := stat["total_inactive_file"]; ok {
		inactive = v
	}
	r.workingSet = max(r.usage-inactive, 0)
	if cg.v2 {
		events, err := cg.readKeyed(cg.file("memory.events", ""))
		if err != nil {
			return r, err
		}
		r.limitHits, r.oomKills = events["max"], events["oom_kill"]
		return r, nil
	}
	if r.limitHits, err = cg.readInt(cg.file("", "memory.failcnt")); err != nil {
		return r, err
	}
	oom, err := cg.readKeyed(cg.file("", "memory.oom_control"))
	if err != nil {
		return r, err
	}
	r.oomKills = oom["oom_kill"]
	return r, nil
}

// readInt reads a file that holds one number.
func (cg *memoryCgroup) readInt(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %s: %w", file, err)
	}
	return n, nil
}

// readKeyed reads a file of "key value" lines.
func (cg *memoryCgroup) readKeyed(file string) (map[string]int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return parseKeyed(string(b)), nil
}

// parseKeyed reads "key value" lines into a map; lines whose value is not a number are
// skipped.
func parseKeyed(text string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	return out
}

// remove removes the cgroup, which must hold no process any more.
func (cg *memoryCgroup) remove() error {
	if err := os.Remove(cg.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cgroup: remove %s: %w", cg.dir, err)
	}
	return nil
}
