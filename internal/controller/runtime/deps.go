package runtime

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Objects is all a step asks of a cluster, whether the one the Runtimes live in, the Gardener
// project or a runtime's own: reading objects and writing them whole. It is client.Client
// without the status and sub-resource writers and the REST plumbing, so what a step may do is
// plain from its dependencies. The manager passes its clients; a step test passes an in-memory
// store (controller-runtime's fake client, which also applies server-side).
type Objects interface {
	client.Reader
	client.Writer
}

// Clusters reaches the runtimes' own clusters.
type Clusters interface {
	// Connect returns the objects of rt's cluster, reached with the admin kubeconfig that the
	// GardenerCluster controller keeps in rt's kubeconfig Secret.
	Connect(ctx context.Context, rt *infrav1.Runtime) (Objects, error)
}

// ClientFunc returns a client for a runtime's own cluster from its admin kubeconfig.
type ClientFunc func(ctx context.Context, kubeconfig []byte) (client.Client, error)

// createOrUpdate creates obj, or updates it when mutate changed it, as
// controllerutil.CreateOrUpdate does over the narrower Objects. mutate sees the object as the
// cluster has it (its ResourceVersion empty when it does not exist yet), and may refuse it.
func createOrUpdate(ctx context.Context, c Objects, obj client.Object, mutate func() error) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return err //nolint:wrapcheck // The caller names the object.
		}
		if err := mutate(); err != nil {
			return err
		}
		return c.Create(ctx, obj) //nolint:wrapcheck // The caller names the object.
	}
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("copy %s: not an object", obj.GetName())
	}
	if err := mutate(); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	return c.Update(ctx, obj) //nolint:wrapcheck // The caller names the object.
}
