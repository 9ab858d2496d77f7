package subprocess

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitForLog waits until a line of the child's log starts with prefix, and returns the rest of
// it: the child has got as far as printing it.
func waitForLog(t *testing.T, p *Process, prefix string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(p.LogTail(50), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return rest
			}
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("%s never logged a line starting with %q:\n%s", p.Name(), prefix, p.LogTail(50))
		}
	}
}

// running reports whether pid is a process that has not ended (a zombie has ended).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestStopEndsAChildOnSIGTERM(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "sleep.log")
	p, err := Start("sleep", Options{Log: log, Env: []string{"GREETING=hello"}}, "sh", "-c", `echo "$GREETING"; exec sleep 60`)
	if err != nil {
		t.Fatal(err)
	}
	waitForLog(t, p, "hello")
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("stop: %v, want a clean stop", err)
	}
	if !p.Exited() || running(p.PID()) {
		t.Error("the child runs on after Stop")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("a second stop: %v, want none", err)
	}
	tail := p.LogTail(10)
	for _, want := range []string{"===== sleep starts at", "hello", "===== sleep (pid " + strconv.Itoa(p.PID()) + ") ended at"} {
		if !strings.Contains(tail, want) {
			t.Errorf("log lacks %q:\n%s", want, tail)
		}
	}
}

// TestStopKillsWhatIgnoresSIGTERM stops a child that ignores SIGTERM and has started a
// grandchild in a session of its own, which no signal to the child's group reaches.
func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	p, err := Start("stubborn", Options{Log: filepath.Join(t.TempDir(), "stubborn.log")}, "sh", "-c",
		`trap "" TERM; setsid sleep 60 & echo "grandchild $!"; while :; do sleep 0.1; done`)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(waitForLog(t, p, "grandchild "))
	if err != nil {
		t.Fatalf("grandchild pid: %v", err)
	}
	if err := p.Stop(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Errorf("stop: %v, want that it was killed", err)
	}
	if running(p.PID()) {
		t.Error("the child runs on after Stop")
	}
	// The grandchild is no child of this process, so Stop cannot wait for it: a SIGKILL takes
	// effect soon after it is sent, not at once.
	for deadline := time.Now().Add(30 * time.Second); running(grandchild); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the grandchild runs on after Stop")
		}
	}
}

func TestStopReportsAFailedExit(t *testing.T) {
	t.Parallel()
	p, err := Start("failing", Options{}, "sh", "-c", "exit 3")
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if p.Err() == nil {
		t.Error("Err: nil, want the exit status")
	}
	if err := p.Stop(time.Second); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("stop: %v, want exit status 3", err)
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	p, err := Start("sleep", Options{}, "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() || p.Err() == nil {
		t.Errorf("after Kill: exited %v, error %v; want ended by SIGKILL", p.Exited(), p.Err())
	}
}

func TestWaitHTTP(t *testing.T) {
	t.Parallel()
	ready := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(ready.Close)
	p, err := Start("sleep", Options{}, "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if err := p.WaitHTTP(t.Context(), ready.URL, 30*time.Second); err != nil {
		t.Errorf("a server that answers 200: %v", err)
	}

	exits, err := Start("exits", Options{Log: filepath.Join(t.TempDir(), "exits.log")}, "sh", "-c", "echo giving up; exit 1")
	if err != nil {
		t.Fatal(err)
	}
	// No server listens on this address: only the child's end can end the wait early.
	err = exits.WaitHTTP(t.Context(), "http://127.0.0.1:1/", time.Minute)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "giving up") {
		t.Errorf("a child that exits: %v, want ErrExited with the end of its log", err)
	}
}

func TestLoopbackAddress(t *testing.T) {
	t.Parallel()
	addr, err := LoopbackAddress(0)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	if host != "127.0.0.1" || p < firstPrivatePort || p >= ephemeralLow() {
		t.Errorf("got %s, want a port on 127.0.0.1 from %d up to the ephemeral range at %d", addr, firstPrivatePort, ephemeralLow())
	}

	// A preferred port that is taken gives another one. The port is one this test holds, not
	// the one checked above: that one was free only when checked, and the packages testing
	// beside this one pick ports from the same range.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	taken := ln.Addr().(*net.TCPAddr).Port
	other, err := LoopbackAddress(taken)
	if err != nil {
		t.Fatal(err)
	}
	if other == ln.Addr().String() {
		t.Errorf("LoopbackAddress(%d) gave the taken %s", taken, other)
	}
}
