package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The repository's CRDs and admission policies, relative to its root.
var (
	CRDDir       = filepath.Join("config", "crd", "bases")
	AdmissionDir = filepath.Join("config", "admission")
)

// Options say what a control plane runs and serves.
type Options struct {
	// Assets holds the kube-apiserver and etcd binaries (bin/k8s).
	Assets string
	// CRDDirs hold CRD manifests to install (config/crd/bases); a missing one is an error.
	CRDDirs []string
	// CRDs are CRDs to install besides those of CRDDirs (the simulator's embedded ones).
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// AdmissionDir holds the admission policies to apply (config/admission); Start returns
	// once they are in force. Empty applies none.
	AdmissionDir string
	// Scheme knows the types the client reads and writes; nil is client-go's scheme.
	Scheme *runtime.Scheme
	// ProcessOutput receives the output of etcd and kube-apiserver; nil discards it.
	ProcessOutput io.Writer
	// CertDir keeps the API server's certificates, port and users. With it, a restart of the
	// API server (APIServer().Stop and Start) keeps serving the same CA on the same port to the
	// same users, so that kubeconfigs written before still reach it; empty is a temporary
	// directory that a restart replaces.
	CertDir string
	// APIServerArgs are flags for kube-apiserver besides envtest's (name without the dashes
	// to value), such as the aggregation layer's --requestheader-* and --proxy-client-*.
	APIServerArgs map[string]string
	// StartTimeout and StopTimeout bound the start and the stop of each of etcd and
	// kube-apiserver; past StopTimeout a process is killed. Zero means 90s and 30s, which a
	// loaded machine needs.
	StartTimeout, StopTimeout time.Duration
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an uncached client with the scheme of the options.
	Client client.WithWatch

	env *envtest.Environment
}

// CheckAssets returns an error naming the first of kube-apiserver and etcd that dir lacks.
func CheckAssets(dir string) error {
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return fmt.Errorf("%s is missing (run 'make envtest-binaries', or set KUBEBUILDER_ASSETS to a directory with kube-apiserver and etcd): %w",
				filepath.Join(dir, bin), err)
		}
	}
	return nil
}

// Start boots etcd and kube-apiserver, installs the CRDs and applies the admission policies, and
// returns once the policies are in force. On error it stops what it started. ctx bounds the
// start only; the control plane runs until Stop.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	if err := CheckAssets(o.Assets); err != nil {
		return nil, err
	}
	if o.Scheme == nil {
		o.Scheme = scheme.Scheme
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    o.Assets,
		CRDDirectoryPaths:        o.CRDDirs,
		CRDs:                     o.CRDs,
		ErrorIfCRDPathMissing:    true,
		Scheme:                   o.Scheme,
		ControlPlaneStartTimeout: orDefault(o.StartTimeout, 90*time.Second),
		ControlPlaneStopTimeout:  orDefault(o.StopTimeout, 30*time.Second),
	}
	api := env.ControlPlane.GetAPIServer()
	api.CertDir, api.Out, api.Err = o.CertDir, o.ProcessOutput, o.ProcessOutput
	for name, value := range o.APIServerArgs {
		api.Configure().Set(name, value)
	}
	env.ControlPlane.Etcd = &envtest.Etcd{Out: o.ProcessOutput, Err: o.ProcessOutput}
	track(env)
	cfg, err := env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start etcd and kube-apiserver: %w", err), stopEnv(env))
	}
	cp := &ControlPlane{Config: cfg, env: env}
	if cp.Client, err = client.NewWithWatch(cfg, client.Options{Scheme: o.Scheme}); err != nil {
		return nil, errors.Join(fmt.Errorf("build client: %w", err), cp.Stop())
	}
	if o.AdmissionDir != "" {
		if err := ApplyDir(ctx, cp.Client, o.AdmissionDir); err != nil {
			return nil, errors.Join(err, cp.Stop())
		}
		if err := cp.waitForAdmission(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("admission policies of %s: %w", o.AdmissionDir, err), cp.Stop())
		}
	}
	return cp, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// APIServer is the running kube-apiserver, for a test that stops and starts it (see
// Options.CertDir).
func (cp *ControlPlane) APIServer() *envtest.APIServer { return cp.env.ControlPlane.APIServer }

// EtcdURL is where etcd serves, for more API servers on the same store.
func (cp *ControlPlane) EtcdURL() *url.URL { return cp.env.ControlPlane.Etcd.URL }

// CreateNamespace creates a namespace, tolerating one that exists.
func (cp *ControlPlane) CreateNamespace(ctx context.Context, name string) error {
	return CreateNamespace(ctx, cp.Client, name, nil)
}

// Stop shuts kube-apiserver and etcd down and removes their data.
func (cp *ControlPlane) Stop() error { return stopEnv(cp.env) }

func stopEnv(env *envtest.Environment) error {
	defer untrack(env)
	if err := env.Stop(); err != nil {
		return fmt.Errorf("stop etcd and kube-apiserver: %w", err)
	}
	return nil
}
