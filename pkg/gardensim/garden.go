package gardensim

import (
	"context"
	"fmt"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/data/crd"
)

// ProjectNamespace is the namespace of a Gardener project's shoots.
func ProjectNamespace(project string) string { return "garden-" + project }

// startGarden boots the garden kube-apiserver and etcd from the assets directory, serving the
// embedded Gardener CRDs to a client of scheme.
func startGarden(ctx context.Context, o options, scheme *runtime.Scheme) (*controlplane.ControlPlane, error) {
	crds, err := crd.Read(crd.FS)
	if err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Assets: o.assets, CRDs: crds, Scheme: scheme, ProcessOutput: o.processOutput,
	})
	if err != nil {
		return nil, fmt.Errorf("start garden API server: %w", err)
	}
	return cp, nil
}

// createProjects creates the project namespaces, labelled as Gardener
// labels them.
func createProjects(ctx context.Context, c client.Client, projects []string) error {
	for _, p := range projects {
		err := controlplane.CreateNamespace(ctx, c, ProjectNamespace(p), map[string]string{
			v1beta1constants.ProjectName: p,
			v1beta1constants.GardenRole:  v1beta1constants.GardenRoleProject,
		})
		if err != nil {
			return fmt.Errorf("project %s: %w", p, err)
		}
	}
	return nil
}
