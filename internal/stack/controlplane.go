package stack

import (
	"context"
	"io"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// ControlPlaneName is the name of the control plane in Stop's reports.
const ControlPlaneName = "control plane (kube-apiserver, etcd)"

// ControlPlaneOptions say how to start the control plane.
type ControlPlaneOptions struct {
	// Root is the repository root, which holds controlplane.CRDDir and controlplane.AdmissionDir.
	// Empty is the working directory.
	Root string
	// Assets holds the kube-apiserver and etcd binaries.
	Assets string
	// Scheme knows the types of the control plane's client.
	// Nil is the manager's scheme (manager.NewScheme).
	Scheme *runtime.Scheme
	// Namespace is created once the API server serves. Empty creates none.
	Namespace string
	// ProcessOutput receives the output of etcd and kube-apiserver. Nil discards it.
	ProcessOutput io.Writer
	// CertDir keeps the API server's certificates across a restart (controlplane.Options).
	CertDir string
	// StartTimeout and StopTimeout bound the start and the stop of etcd and kube-apiserver.
	// Zero takes the defaults of package controlplane.
	StartTimeout, StopTimeout time.Duration
}

// StartControlPlane starts etcd and kube-apiserver with the repository's CRDs and admission policies.
// It returns once the policies are in force and the namespace exists.
func (s *Stack) StartControlPlane(ctx context.Context, o ControlPlaneOptions) (*controlplane.ControlPlane, error) {
	scheme := o.Scheme
	if scheme == nil {
		var err error
		if scheme, err = manager.NewScheme(); err != nil {
			return nil, err
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Assets:        o.Assets,
		CRDDirs:       []string{filepath.Join(o.Root, controlplane.CRDDir)},
		AdmissionDir:  filepath.Join(o.Root, controlplane.AdmissionDir),
		Scheme:        scheme,
		ProcessOutput: o.ProcessOutput,
		CertDir:       o.CertDir,
		StartTimeout:  o.StartTimeout,
		StopTimeout:   o.StopTimeout,
	})
	if err != nil {
		return nil, err
	}
	s.Add(ControlPlaneName, cp.Stop)
	if o.Namespace != "" {
		if err := cp.CreateNamespace(ctx, o.Namespace); err != nil {
			return nil, err
		}
	}
	return cp, nil
}
