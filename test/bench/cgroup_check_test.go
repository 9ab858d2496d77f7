package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The kernel's files are "key value" lines: v1's memory.oom_control mixes flags and counters.
func TestParseKeyedReadsTheCgroupFiles(t *testing.T) {
	got := parseKeyed("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	if got["oom_kill"] != 3 || got["under_oom"] != 0 || len(got) != 3 {
		t.Errorf("v1 memory.oom_control: got %v", got)
	}
	got = parseKeyed("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n")
	if got["max"] != 12 || got["oom_kill"] != 1 {
		t.Errorf("v2 memory.events: got %v", got)
	}
	if got := parseKeyed("total_inactive_file 4096\nhierarchical_memory_limit not-a-number\n"); got["total_inactive_file"] != 4096 || len(got) != 1 {
		t.Errorf("memory.stat with a value that is no number: got %v", got)
	}
}

// A command started through the cgroup runs in it from its start, with the cgroup's limit and
// an account of its memory, and the cgroup goes with the process.
func TestMemoryCgroupHoldsTheProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a cgroup needs root")
	}
	cg, err := newMemoryCgroup("infrastructure-manager-bench-test-"+strconv.Itoa(os.Getpid()), "64Mi")
	if err != nil {
		t.Fatal(err)
	}
	if cg.limit != 64<<20 {
		t.Errorf("limit %d, want %d", cg.limit, 64<<20)
	}
	bin, args := cg.command("/bin/sleep", []string{"30"})
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	// The shell joins the cgroup before it becomes sleep; wait for the exec.
	deadline := time.Now().Add(10 * time.Second)
	for {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm")
		if strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the started process is %q, not sleep", comm)
		}
		time.Sleep(10 * time.Millisecond)
	}
	own, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if name := filepath.Base(cg.dir); !strings.Contains(string(own), "/"+name+"\n") {
		t.Errorf("the process's cgroups do not name %s:\n%s", name, own)
	}
	procs, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(procs)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("cgroup.procs %q, want the started pid %d (exec keeps it)", procs, cmd.Process.Pid)
	}
	r, err := cg.read()
	if err != nil {
		t.Fatal(err)
	}
	if r.usage <= 0 || r.peak < r.usage || r.workingSet > r.usage || r.oomKills != 0 {
		t.Errorf("reading %+v: want a usage, a peak at least that, a working set within it and no OOM kill", r)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := cg.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cg.dir); !os.IsNotExist(err) {
		t.Errorf("the cgroup is still there: %v", err)
	}
}
