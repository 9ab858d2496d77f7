package stack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Stack is a set of running parts.
// Its Start methods record how to stop each part; Stop stops them in reverse order.
// The zero value is ready to use. Its methods are safe for concurrent use.
type Stack struct {
	// Report hears of each part that Stop stopped, with how long it took.
	// A part added with AddQuiet is reported only when its stop fails. Nil reports nothing.
	Report func(name string, took time.Duration, err error)

	mu       sync.Mutex
	parts    []part
	stopping atomic.Bool
}

// part is one thing to stop.
type part struct {
	name  string
	stop  func() error
	quiet bool
}

// Add records how to stop a part that was just started.
func (s *Stack) Add(name string, stop func() error) { s.add(part{name: name, stop: stop}) }

// AddQuiet records a clean-up, such as closing a file.
// Report hears of it only when it fails.
func (s *Stack) AddQuiet(name string, stop func() error) {
	s.add(part{name: name, stop: stop, quiet: true})
}

func (s *Stack) add(p part) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts = append(s.parts, p)
}

// Stopping reports whether Stop has begun.
// A watcher of a part uses it to tell a stop from a crash.
func (s *Stack) Stopping() bool { return s.stopping.Load() }

// Stop stops every part in reverse start order.
// It goes on after a failure and returns every failure.
// A second call stops only what was added since the first.
func (s *Stack) Stop() error {
	s.stopping.Store(true)
	s.mu.Lock()
	parts := s.parts
	s.parts = nil
	s.mu.Unlock()
	var errs []error
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		began := time.Now()
		err := p.stop()
		if err != nil {
			err = fmt.Errorf("stop %s: %w", p.name, err)
			errs = append(errs, err)
		}
		if s.Report != nil && (err != nil || !p.quiet) {
			s.Report(p.name, time.Since(began), err)
		}
	}
	return errors.Join(errs...)
}

// CreateFile creates the file path, and its directory, for a log or a configuration.
// Stop closes it.
func (s *Stack) CreateFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("create directory of %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	s.AddQuiet("file "+path, f.Close)
	return f, nil
}
