package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/manifest"
)

// CreateNamespace creates the namespace name with labels, tolerating one that exists (whatever
// its labels).
func CreateNamespace(ctx context.Context, c client.Client, name string, labels map[string]string) error {
	ns := &corev1.Namespace{}
	ns.Name, ns.Labels = name, labels
	if err := client.IgnoreAlreadyExists(c.Create(ctx, ns)); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// ApplyDir creates every object of the manifests of dir (manifest.ReadDir): on a control plane
// of its own, an object that exists already is an error.
func ApplyDir(ctx context.Context, c client.Client, dir string) error {
	objs, err := manifest.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.Create(ctx, o.Object); err != nil {
			return fmt.Errorf("create %s %s from %s: %w", o.Object.GetKind(), o.Object.GetName(), o.File, err)
		}
	}
	return nil
}

// Create creates a copy of obj, tolerating one that exists; existed says which it was.
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
