package subprocess

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitHTTP polls url until a GET answers 200 OK, and fails early when the child ends first.
// The error of a child that is not ready within timeout quotes the end of its log.
func (p *Process) WaitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("%s exited before it was ready: %w", p.name, errors.Join(p.err, ErrExited))
		}
		last = HTTPOK(ctx, url)
		return last == nil, nil
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrExited) {
		err = fmt.Errorf("%s not ready at %s within %s: %w", p.name, url, timeout, errors.Join(err, last))
	}
	if tail := p.LogTail(20); tail != "" {
		return fmt.Errorf("%w\n%s", err, tail)
	}
	return err
}

// ErrExited says a child ended while it was waited for.
var ErrExited = errors.New("process exited")

// HTTPOK returns nil when a GET of url answers 200 OK within two seconds.
func HTTPOK(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("request %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// LoopbackAddress returns 127.0.0.1:preferred when that port is free, else (and for 0) a free
// loopback port. The port is free when checked; another program may still take it before the
// child listens on it.
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
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	return addr, nil
}
