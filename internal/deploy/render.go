package deploy

import (
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/manifest"
)

// DefaultDir is the shipped kustomization, relative to the repository root.
var DefaultDir = filepath.Join("config", "default")

// ManagerContainer is the name of the manager's container in the Deployment.
const ManagerContainer = "manager"

// Render builds the kustomization in dir. With image set, the manager's container runs that
// image instead of the one config/manager names. The result is one YAML stream, ordered as
// `kustomize build` orders it (namespaces and CRDs first, admission configuration last), so
// that `kubectl apply` creates every kind before its objects.
func Render(dir, image string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	if image != "" {
		if err := setImage(m, image); err != nil {
			return nil, err
		}
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return out, nil
}

// setImage sets the image of the manager's container in every Deployment of m.
func setImage(m resmap.ResMap, image string) error {
	found := false
	for _, r := range m.Resources() {
		if r.GetKind() != "Deployment" {
			continue
		}
		c, err := r.Pipe(kyaml.Lookup("spec", "template", "spec", "containers", "[name="+ManagerContainer+"]"))
		if err != nil {
			return fmt.Errorf("deployment %s: %w", r.GetName(), err)
		}
		if c == nil {
			continue
		}
		if err := c.PipeE(kyaml.SetField("image", kyaml.NewStringRNode(image))); err != nil {
			return fmt.Errorf("deployment %s: set image: %w", r.GetName(), err)
		}
		found = true
	}
	if !found {
		return errors.New("no Deployment with a container named " + ManagerContainer)
	}
	return nil
}

// Objects decodes a rendered YAML stream, in order.
func Objects(rendered []byte) ([]*unstructured.Unstructured, error) {
	objs, err := manifest.Decode(rendered)
	if err != nil {
		return nil, fmt.Errorf("decode rendered manifests: %w", err)
	}
	return objs, nil
}
