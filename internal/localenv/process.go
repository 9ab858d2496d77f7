package localenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"time"
)

// Process is a child process the local environment started and must stop.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts bin with args, its output going to out. The child gets a process group of
// its own, so a Ctrl-C in the terminal reaches only this program, which stops the child in its
// turn; and it is killed if this program dies without stopping it.
func StartProcess(name string, out io.Writer, bin string, args ...string) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has ended, for whatever reason.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Stop asks the process to end (SIGTERM), kills it after grace, and waits for it. A process that
// ended on the signal counts as stopped cleanly.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return p.exitError()
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.exitError()
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s did not stop within %s and was killed", p.name, grace)
}

// exitError is the process's exit error, ignoring an exit caused by SIGTERM.
func (p *Process) exitError() error {
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w", p.name, p.err)
	}
	return nil
}

// WaitHTTP polls url until it answers 200 OK, the process ends, or timeout passes.
func (p *Process) WaitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("request %s: %w", url, err)
		}
		if resp, err := c.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (see its log): %w", p.name, errors.Join(p.err, errExited))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w", p.name, url, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// errExited says a process ended.
var errExited = errors.New("process exited")

// LoopbackAddress returns 127.0.0.1:preferred when that port is free, else a free loopback port.
// The port is free when checked; another program may still take it before it is used.
func LoopbackAddress(preferred int) (string, error) {
	if preferred > 0 {
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", preferred)); err == nil {
			addr := ln.Addr().String()
			_ = ln.Close()
			return addr, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr, nil
}
