package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a client with the project's types in its scheme.
	Client client.Client

	env *envtest.Environment
}

// RepoRoot returns the repository's root directory, found from this source file.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testenv: cannot find the source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Start boots etcd and kube-apiserver, installs the CRDs of config/crd/bases and applies the
// admission policies of config/admission. Call Stop when done.
func Start(ctx context.Context) (*Env, error) {
	// Controllers under test log to stderr when TEST_LOG is set, and nowhere otherwise.
	logs := io.Writer(io.Discard)
	if os.Getenv("TEST_LOG") != "" {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(RepoRoot(), "bin", "k8s")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("kube-apiserver not found in %s (run 'make envtest-binaries'): %w", assets, err)
	}
	root := RepoRoot()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest: %w", err)
	}
	e := &Env{Config: cfg, env: env}
	s := scheme.Scheme
	if err := infrav1.AddToScheme(s); err != nil {
		return nil, errors.Join(fmt.Errorf("add scheme: %w", err), e.Stop())
	}
	if e.Client, err = client.New(cfg, client.Options{Scheme: s}); err != nil {
		return nil, errors.Join(fmt.Errorf("new client: %w", err), e.Stop())
	}
	if err := ApplyDir(ctx, e.Client, filepath.Join(root, "config", "admission")); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if err := e.waitForAdmissionPolicy(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

// waitForAdmissionPolicy returns once the API server enforces the required-labels policy: a
// policy takes effect only after the API server has loaded and type-checked it.
func (e *Env) waitForAdmissionPolicy(ctx context.Context) error {
	probe := &infrav1.Runtime{}
	probe.Name, probe.Namespace = "admission-probe", "default"
	probe.Spec = infrav1.RuntimeSpec{
		Shoot: infrav1.RuntimeShoot{
			Name: "probe", Purpose: "evaluation", PlatformRegion: "p", Region: "r", SecretBindingName: "s",
			Provider: infrav1.Provider{Type: "aws", Workers: []infrav1.Worker{{
				Name: "w", Machine: infrav1.Machine{Type: "m"}, Maximum: 1, Zones: []string{"z"},
			}}},
			Networking: infrav1.Networking{Pods: "10.0.0.0/16", Nodes: "10.1.0.0/16", Services: "10.2.0.0/16"},
		},
		Security: infrav1.Security{Administrators: []string{"admin@example.com"}},
	}
	err := Eventually(ctx, 30*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		err := e.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if apierrors.IsInvalid(err) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("probe: %w", err)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("admission policy not in force: %w", err)
	}
	return nil
}

// Stop shuts the control plane down.
func (e *Env) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("stop envtest: %w", err)
	}
	return nil
}

// CreateNamespace creates a namespace, tolerating one that exists.
func (e *Env) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{}
	ns.Name = name
	if err := client.IgnoreAlreadyExists(e.Client.Create(ctx, ns)); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// ApplyDir creates every object of every YAML file in dir but kustomization.yaml, which is
// kustomize's and no object.
func ApplyDir(ctx context.Context, c client.Client, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		objs, err := ReadObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				return fmt.Errorf("create %s %s from %s: %w", o.GetKind(), o.GetName(), f, err)
			}
		}
	}
	return nil
}

// ReadObjects decodes every document of a YAML file.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
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
