package localenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// ControlPlaneOptions say where the binaries and manifests of the local control plane are.
type ControlPlaneOptions struct {
	// Assets holds the kube-apiserver and etcd binaries (bin/k8s).
	Assets string
	// CRDDir holds the CRDs to install (config/crd/bases).
	CRDDir string
	// AdmissionDir holds the admission policies to apply (config/admission).
	AdmissionDir string
	// Scheme knows the types the returned client reads and writes.
	Scheme *runtime.Scheme
	// ProcessOutput receives the output of etcd and kube-apiserver; nil discards it.
	ProcessOutput io.Writer
}

// ControlPlane is a running local etcd and kube-apiserver: the cluster the Runtimes live in.
type ControlPlane struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an uncached client with the scheme of the options.
	Client client.Client

	env *envtest.Environment
}

// CheckAssets returns an error naming the first missing binary of dir.
func CheckAssets(dir string) error {
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return fmt.Errorf("%s is missing (run 'make envtest-binaries', or 'make run' which builds it first): %w",
				filepath.Join(dir, bin), err)
		}
	}
	return nil
}

// StartControlPlane boots etcd and kube-apiserver, installs the CRDs and applies the admission
// policies, and returns once the policies are in force. On error it stops what it started.
func StartControlPlane(ctx context.Context, o ControlPlaneOptions) (*ControlPlane, error) {
	if err := CheckAssets(o.Assets); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    o.Assets,
		CRDDirectoryPaths:        []string{o.CRDDir},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if o.ProcessOutput != nil {
		api := env.ControlPlane.GetAPIServer()
		api.Out, api.Err = o.ProcessOutput, o.ProcessOutput
		api.Path = filepath.Join(o.Assets, "kube-apiserver")
		env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(o.Assets, "etcd"), Out: o.ProcessOutput, Err: o.ProcessOutput}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start etcd and kube-apiserver: %w", err), stopEnv(env))
	}
	cp := &ControlPlane{Config: cfg, env: env}
	if cp.Client, err = client.New(cfg, client.Options{Scheme: o.Scheme}); err != nil {
		return nil, errors.Join(fmt.Errorf("build client: %w", err), cp.Stop())
	}
	objs, err := ReadManifests(o.AdmissionDir)
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	for _, obj := range objs {
		if _, err := Create(ctx, cp.Client, obj.Object); err != nil {
			return nil, errors.Join(err, cp.Stop())
		}
	}
	if err := cp.waitForAdmission(ctx); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

// waitForAdmission returns once the API server rejects a Runtime without the required labels:
// a policy is in force only after the API server has loaded it.
func (cp *ControlPlane) waitForAdmission(ctx context.Context) error {
	probe := &infrav1.Runtime{Spec: infrav1.RuntimeSpec{
		Shoot: infrav1.RuntimeShoot{
			Name: "probe", Purpose: "evaluation", PlatformRegion: "local", Region: "local", SecretBindingName: "probe",
			Provider: infrav1.Provider{Type: "aws", Workers: []infrav1.Worker{{
				Name: "probe", Machine: infrav1.Machine{Type: "probe"}, Maximum: 1, Zones: []string{"probe"},
			}}},
			Networking: infrav1.Networking{Pods: "10.0.0.0/16", Nodes: "10.1.0.0/16", Services: "10.2.0.0/16"},
		},
		Security: infrav1.Security{Administrators: []string{"probe@example.com"}},
	}}
	probe.Name, probe.Namespace = "admission-probe", metav1.NamespaceDefault
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := cp.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if apierrors.IsInvalid(err) {
			return nil
		}
		if err == nil {
			err = errors.New("a Runtime without labels was accepted")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("admission policy of config/admission not in force after 30s: %w", errors.Join(err, ctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// CreateNamespace creates a namespace, tolerating one that exists.
func (cp *ControlPlane) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{}
	ns.Name = name
	if err := client.IgnoreAlreadyExists(cp.Client.Create(ctx, ns)); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// Stop shuts kube-apiserver and etcd down and removes their data.
func (cp *ControlPlane) Stop() error { return stopEnv(cp.env) }

func stopEnv(env *envtest.Environment) error {
	if err := env.Stop(); err != nil {
		return fmt.Errorf("stop etcd and kube-apiserver: %w", err)
	}
	return nil
}

// WriteKubeconfig writes cfg as a kubeconfig file with one context called name, in namespace,
// readable by the owner only.
func WriteKubeconfig(path, name, namespace string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		CertificateAuthority:     cfg.CAFile,
		InsecureSkipTLSVerify:    cfg.Insecure,
	}
	kc.Clusters[name] = cluster
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientCertificate:     cfg.CertFile,
		ClientKeyData:         cfg.KeyData,
		ClientKey:             cfg.KeyFile,
		Token:                 cfg.BearerToken,
		Username:              cfg.Username,
		Password:              cfg.Password,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: namespace}
	kc.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create directory of %s: %w", path, err)
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("restrict kubeconfig %s: %w", path, err)
	}
	return nil
}
