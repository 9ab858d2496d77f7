package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/manifest"
)

// Env is a running control plane (see package controlplane).
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a client with the project's types in its scheme.
	Client client.Client

	cp *controlplane.ControlPlane
}

// RepoRoot returns the repository's root directory, found from this source file.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testenv: cannot find the source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Start boots etcd and kube-apiserver from $KUBEBUILDER_ASSETS (else the repository's bin/k8s),
// installs the CRDs of config/crd/bases and applies the admission policies of config/admission,
// and returns once they are in force. Call Stop when done.
func Start(ctx context.Context) (*Env, error) {
	SetLogger()
	s, err := Scheme()
	if err != nil {
		return nil, err
	}
	root := RepoRoot()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Assets:       Assets(),
		CRDDirs:      []string{filepath.Join(root, controlplane.CRDDir)},
		AdmissionDir: filepath.Join(root, controlplane.AdmissionDir),
		Scheme:       s,
	})
	if err != nil {
		return nil, err
	}
	return &Env{Config: cp.Config, Client: cp.Client, cp: cp}, nil
}

// SetLogger sends the log of controllers under test to stderr when TEST_LOG is set.
// Otherwise it discards it.
// controller-runtime keeps the first logger it gets, so a suite that logs elsewhere sets its own first.
func SetLogger() {
	logs := io.Writer(io.Discard)
	if os.Getenv("TEST_LOG") != "" {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
}

// Scheme is the scheme of the tests' clients: client-go's, with the project's types added.
// Suites that start their parts with package stack give it to the control plane.
func Scheme() (*k8sruntime.Scheme, error) {
	s := scheme.Scheme
	if err := infrav1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("add scheme: %w", err)
	}
	return s, nil
}

// Assets is the directory of the kube-apiserver and etcd binaries: $KUBEBUILDER_ASSETS, else the
// repository's bin/k8s, where make builds them. Suites hand it to the Gardener simulator too
// (gardensim.WithAssets), so both find the same binaries with or without the variable.
func Assets() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin", "k8s")
}

// Stop shuts the control plane down.
func (e *Env) Stop() error { return e.cp.Stop() }

// CreateNamespace creates a namespace, tolerating one that exists.
func (e *Env) CreateNamespace(ctx context.Context, name string) error {
	return e.cp.CreateNamespace(ctx, name)
}

// ApplyDir creates every object of every YAML file in dir but kustomization.yaml, which is
// kustomize's and no object (controlplane.ApplyDir).
func ApplyDir(ctx context.Context, c client.Client, dir string) error {
	return controlplane.ApplyDir(ctx, c, dir)
}

// ReadObjects decodes every document of a YAML file (manifest.ReadFile).
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	return manifest.ReadFile(path)
}

// Eventually calls cond until it returns true or the timeout passes, and returns the last error
// cond reported when it gives up.
func Eventually(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("condition not met within %s: %w", timeout, errors.Join(ctx.Err(), last))
		case <-ticker.C:
		}
	}
}

// FixturesDir returns the directory of the real-world fixtures the tests read: the repository's
// testdata (see testdata/upstream-runtimes/README.md for where they come from).
func FixturesDir() string {
	return filepath.Join(RepoRoot(), "testdata")
}
