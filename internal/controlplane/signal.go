package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// running holds the environments Start started and Stop has not stopped yet. etcd and
// kube-apiserver run in process groups of their own, so nothing else ends them when the process
// that started them dies.
var running = struct {
	sync.Mutex
	envs map[*envtest.Environment]struct{}
}{envs: map[*envtest.Environment]struct{}{}}

func track(env *envtest.Environment) {
	running.Lock()
	defer running.Unlock()
	running.envs[env] = struct{}{}
}

func untrack(env *envtest.Environment) {
	running.Lock()
	defer running.Unlock()
	delete(running.envs, env)
}

// StopAll stops every control plane of this process that is still running.
func StopAll() error {
	running.Lock()
	envs := make([]*envtest.Environment, 0, len(running.envs))
	for env := range running.envs {
		envs = append(envs, env)
	}
	running.Unlock()
	var errs []error
	for _, env := range envs {
		errs = append(errs, stopEnv(env))
	}
	return errors.Join(errs...)
}

// StopOnSignal makes SIGINT and SIGTERM stop every running control plane and then end the
// process with the signal's conventional exit code (128 + its number). A long test (the
// benchmarks, the chaos run) calls it from TestMain, so that stopping `go test` does not leave
// etcd and kube-apiserver behind. The returned function removes the handler.
func StopOnSignal() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			fmt.Fprintf(os.Stderr, "controlplane: %v: stopping etcd and kube-apiserver before exiting\n", sig)
			if err := StopAll(); err != nil {
				fmt.Fprintln(os.Stderr, "controlplane:", err)
			}
			os.Exit(128 + int(sig.(syscall.Signal)))
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
