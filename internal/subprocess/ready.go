package subprocess

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
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
//
// The port comes from below the kernel's ephemeral range. The range's ports are the source
// ports of outgoing connections, and a busy test opens many: a port the kernel handed out free
// could be some connection's source port a moment later, and the child's listen would fail.
func LoopbackAddress(preferred int) (string, error) {
	if preferred > 0 {
		if addr, ok := listenable(preferred); ok {
			return addr, nil
		}
	}
	low := ephemeralLow()
	if low-firstPrivatePort < 1024 {
		// Too few ports below the range to pick from: take the kernel's.
		return kernelsFreePort()
	}
	for range 200 {
		if addr, ok := listenable(firstPrivatePort + rand.IntN(low-firstPrivatePort)); ok {
			return addr, nil
		}
	}
	return "", fmt.Errorf("find a free loopback port: none of 200 tried in %d-%d was free", firstPrivatePort, low-1)
}

// firstPrivatePort is the lowest port LoopbackAddress hands out: ports below it are the
// registered ports of well-known services.
const firstPrivatePort = 16384

// ephemeralLow is the first port of the kernel's ephemeral range, Linux's default where the
// kernel does not say.
func ephemeralLow() int {
	const linuxDefault = 32768
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return linuxDefault
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return linuxDefault
	}
	return low
}

// kernelsFreePort returns a loopback address with a port the kernel finds free.
func kernelsFreePort() (string, error) {
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

// listenable reports whether 127.0.0.1:port can be listened on now, and the address.
func listenable(port int) (string, bool) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return "", false
	}
	addr := ln.Addr().String()
	return addr, ln.Close() == nil
}
