package crd

import (
	"errors"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Read parses every *.yaml manifest at the top of fsys as a CustomResourceDefinition, strictly:
// a field the type does not know is an error. Each call returns new objects, which the caller
// may change (installing does).
func Read(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(fsys, "*.yaml")
	if err != nil || len(files) == 0 {
		return nil, errors.Join(errors.New("no CRD manifests"), err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("read CRD %s: %w", f, err)
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			return nil, fmt.Errorf("parse CRD %s: %w", f, err)
		}
		crds = append(crds, c)
	}
	return crds, nil
}
