package subprocess

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options say how a child runs.
type Options struct {
	// Log is the file the child's output is appended to, between a line when the run starts
	// and one when it ends, so that every run of one program can share a log. When it is
	// empty the output goes to Output.
	Log string
	// Output receives the output when Log is empty; nil discards it.
	Output io.Writer
	// Env is added to this process's environment for the child.
	Env []string
	// DeathSignal is what the kernel sends the child when this process dies; the default is
	// SIGKILL. SIGTERM suits a child that must stop children of its own (the simulator stops
	// its etcd and API servers).
	DeathSignal syscall.Signal
}

// Process is a running child. Its methods are safe for concurrent use.
type Process struct {
	name    string
	cmd     *exec.Cmd
	log     string
	started time.Time
	// done is closed when the child has ended; err is set before.
	done chan struct{}
	err  error
}

// Start runs bin with args as a child named name (in errors and the log).
func Start(name string, o Options, bin string, args ...string) (*Process, error) {
	out := o.Output
	var logFile *os.File
	if o.Log != "" {
		var err error
		if logFile, err = os.OpenFile(o.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return nil, fmt.Errorf("%s: open log: %w", name, err)
		}
		fmt.Fprintf(logFile, "\n===== %s starts at %s: %s %s\n", name, time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
		out = logFile
	}
	deathSignal := o.DeathSignal
	if deathSignal == 0 {
		deathSignal = syscall.SIGKILL
	}
	cmd := exec.Command(bin, args...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSignal}
	if err := cmd.Start(); err != nil {
		if logFile != nil {
			_ = logFile.Close()
		}
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, log: o.Log, started: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if logFile != nil {
			fmt.Fprintf(logFile, "===== %s (pid %d) ended at %s: %v\n", name, cmd.Process.Pid, time.Now().Format(time.RFC3339Nano), p.err)
			_ = logFile.Close()
		}
		close(p.done)
	}()
	return p, nil
}

// Name is the name the child was started with.
func (p *Process) Name() string { return p.name }

// PID is the child's process id, which is also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Started is when the child was started.
func (p *Process) Started() time.Time { return p.started }

// Log is the child's log file; empty when its output went elsewhere.
func (p *Process) Log() string { return p.log }

// Done is closed when the child has ended, for whatever reason.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the child has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is how the child ended (exec.Cmd.Wait's error): nil while it runs and after a clean exit.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Stop sends SIGTERM to the child's process group and waits up to grace for the child to end.
// Past grace it SIGKILLs the group and every process below the child, also those in groups of
// their own (the simulator's etcd and API servers), so that nothing outlives the stop, and
// says so in its error. A child that ended on the SIGTERM or with status 0 stopped cleanly;
// otherwise the error is how it ended. A nil Process is stopped.
func (p *Process) Stop(grace time.Duration) error {
	if p == nil || p.Exited() {
		return p.exitError()
	}
	tree := descendants(p.PID())
	if err := syscall.Kill(-p.PID(), syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return p.exitError()
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	for _, pid := range append(tree, descendants(p.PID())...) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-p.done
	return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed with its children", p.name, grace)
}

// Kill SIGKILLs the child's process group and waits until the child is gone.
func (p *Process) Kill() error {
	if p.Exited() {
		return nil
	}
	if err := syscall.Kill(-p.PID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// exitError is how the ended child ended, nil for an end on SIGTERM.
func (p *Process) exitError() error {
	if p == nil || p.err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", p.name, p.err)
}

// LogTail returns the last lines of the child's log, for failure messages; empty without a log.
func (p *Process) LogTail(lines int) string {
	if p.log == "" {
		return ""
	}
	data, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	all := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return string(bytes.Join(all, []byte("\n")))
}

// descendants lists the processes below pid, read from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
