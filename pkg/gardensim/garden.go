package gardensim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/data/crd"
)

// ProjectNamespace is the namespace of a Gardener project's shoots.
func ProjectNamespace(project string) string { return "garden-" + project }

// newGardenEnv prepares the garden kube-apiserver and etcd from the assets
// directory, with the Shoot CRD.
func newGardenEnv(o options) (*envtest.Environment, error) {
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(o.assets, bin)); err != nil {
			return nil, fmt.Errorf("find %s in assets directory %q (set KUBEBUILDER_ASSETS): %w", bin, o.assets, err)
		}
	}
	crds, err := crd.Read(crd.FS)
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDs:                     crds,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	api := env.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(o.assets, "kube-apiserver")
	api.Out, api.Err = o.processOutput, o.processOutput
	env.ControlPlane.Etcd = &envtest.Etcd{
		Path: filepath.Join(o.assets, "etcd"),
		Out:  o.processOutput,
		Err:  o.processOutput,
	}
	return env, nil
}

// createProjects creates the project namespaces, labelled as Gardener
// labels them.
func createProjects(ctx context.Context, c client.Client, projects []string) error {
	for _, p := range projects {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ProjectNamespace(p),
			Labels: map[string]string{
				v1beta1constants.ProjectName: p,
				v1beta1constants.GardenRole:  v1beta1constants.GardenRoleProject,
			},
		}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create project namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}
