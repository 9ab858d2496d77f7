package stack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// ManagerName is the name of the manager in Stop's reports.
const ManagerName = "manager"

// ManagerOptions say how to run the manager in this process.
type ManagerOptions struct {
	// Config reaches the control plane as the manager's identity.
	Config *rest.Config
	// Garden reaches Gardener: the simulator's RESTConfig.
	Garden *rest.Config
	// Options are the manager's options (manager.DefaultOptions and the caller's changes).
	Options manager.Options
	// Logger goes into the manager's context, where client-go's informers find it.
	// The zero Logger leaves the context without one.
	Logger logr.Logger
	// WaitForMetrics makes the start wait, up to a minute, until the metrics endpoint answers.
	WaitForMetrics bool
	// StopTimeout bounds Stop's wait for the manager's end. Zero waits as long as it takes.
	StopTimeout time.Duration
}

// Manager is the manager running in a goroutine of this process.
type Manager struct {
	// Manager is the controller-runtime manager, for its client and scheme.
	ctrl.Manager

	cancel      context.CancelFunc
	done        chan struct{}
	err         error
	stopTimeout time.Duration
	stopOnce    sync.Once
	stopErr     error
}

// StartManager runs the manager and records its stop.
// The manager stops first of all the parts started before it.
func (s *Stack) StartManager(ctx context.Context, o ManagerOptions) (*Manager, error) {
	m, err := RunManager(ctx, o)
	if m != nil {
		s.Add(ManagerName, m.Stop)
	}
	return m, err
}

// RunManager runs the manager; the caller stops it.
// It is for a test that runs a manager of its own.
// On an error after the start it returns the running manager too, for the caller to stop.
func RunManager(ctx context.Context, o ManagerOptions) (*Manager, error) {
	mgr, err := manager.New(o.Config, o.Garden, o.Options)
	if err != nil {
		return nil, err
	}
	// The manager's own context: ctx bounds the start only.
	mctx := context.Background()
	if o.Logger.GetSink() != nil {
		mctx = logr.NewContext(mctx, o.Logger)
	}
	mctx, cancel := context.WithCancel(mctx)
	m := &Manager{Manager: mgr, cancel: cancel, done: make(chan struct{}), stopTimeout: o.StopTimeout}
	go func() {
		defer close(m.done)
		m.err = mgr.Start(mctx)
	}()
	if o.WaitForMetrics {
		if err := m.waitForMetrics(ctx, o.Options.MetricsBindAddress); err != nil {
			return m, err
		}
	}
	return m, nil
}

// waitForMetrics returns once the metrics endpoint answers, and fails when the manager ends first.
func (m *Manager) waitForMetrics(ctx context.Context, addr string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-m.done:
			return false, fmt.Errorf("manager stopped: %w", m.err)
		default:
		}
		last = subprocess.HTTPOK(ctx, "http://"+addr+"/metrics")
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("manager metrics: %w", errors.Join(err, last))
	}
	return nil
}

// Done is closed when the manager has ended.
func (m *Manager) Done() <-chan struct{} { return m.done }

// Err is why the manager ended; nil for an orderly stop. It is valid once Done is closed.
func (m *Manager) Err() error { return m.err }

// Stop stops the manager and waits until it has ended, at most the stop timeout.
// It is safe to call more than once.
func (m *Manager) Stop() error {
	m.stopOnce.Do(func() {
		m.cancel()
		var timeout <-chan time.Time
		if m.stopTimeout > 0 {
			timeout = time.After(m.stopTimeout)
		}
		select {
		case <-m.done:
			if m.err != nil {
				m.stopErr = fmt.Errorf("manager: %w", m.err)
			}
		case <-timeout:
			m.stopErr = fmt.Errorf("manager did not stop within %s", m.stopTimeout)
		}
	})
	return m.stopErr
}
