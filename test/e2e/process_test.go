package e2e_test

import (
	"context"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// process is a program the suite started (Prometheus, Alertmanager), with its output in a log
// file of the work dir; package subprocess runs it and stops it.
type process struct{ *subprocess.Process }

// logTail returns the last lines of the process's log, for failure messages.
func (p *process) logTail(lines int) string { return p.LogTail(lines) }

// startProcess runs bin with args, its output appended to logPath.
func startProcess(name, logPath, bin string, args ...string) (*process, error) {
	p, err := subprocess.Start(name, subprocess.Options{Log: logPath}, bin, args...)
	if err != nil {
		return nil, err
	}
	return &process{p}, nil
}

// stop ends the process (SIGTERM, SIGKILL ten seconds later); a process never started is stopped.
func (p *process) stop() error {
	if p == nil {
		return nil
	}
	return p.Stop(10 * time.Second)
}

// httpOK reports whether a GET of url answers 200, and why not.
func httpOK(ctx context.Context, url string) (bool, error) {
	err := subprocess.HTTPOK(ctx, url)
	return err == nil, err
}
