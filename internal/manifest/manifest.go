package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Object is one object of a manifest file.
type Object struct {
	// File is the path the object was read from.
	File string
	// Object is the object as the file writes it.
	Object *unstructured.Unstructured
}

// Decode decodes every document of a YAML or JSON stream, in order. Empty documents (only
// comments, or nothing between two separators) are skipped: they are no object.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("document %d: %w", len(objs)+1, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ReadFile decodes every document of the file at path.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	objs, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return objs, nil
}

// ReadDir decodes every *.yaml file of dir in file name order, but kustomization.yaml, which is
// kustomize's and no object. A directory without such files is an error: it is most likely the
// wrong directory.
func ReadDir(dir string) ([]Object, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml files in %s", dir)
	}
	var all []Object
	for _, f := range files {
		objs, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			all = append(all, Object{File: f, Object: o})
		}
	}
	return all, nil
}
