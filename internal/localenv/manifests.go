package localenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Manifest is one object read from a YAML file.
type Manifest struct {
	// File the object was read from.
	File string
	// Object as it is written there.
	Object *unstructured.Unstructured
}

// ReadManifests decodes every document of every *.yaml file of dir, in file name order, but
// kustomization.yaml, which is kustomize's and no object. A directory without YAML files is an
// error: it is most likely the wrong directory.
func ReadManifests(dir string) ([]Manifest, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml files in %s", dir)
	}
	var all []Manifest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		objs, err := DecodeObjects(data)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		for _, o := range objs {
			all = append(all, Manifest{File: f, Object: o})
		}
	}
	return all, nil
}

// DecodeObjects decodes every non-empty document of a YAML (or JSON) stream.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decode YAML: %w", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// Create creates obj, tolerating one that exists; existed says which it was.
func Create(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (existed bool, err error) {
	err = c.Create(ctx, obj.DeepCopy())
	if apierrors.IsAlreadyExists(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
	return false, nil
}
