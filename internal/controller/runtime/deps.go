package runtime

import (
	"context"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Objects is all a step asks of the Gardener project and of a runtime's own cluster: reading
// objects and writing them whole. It is client.Client without the status and sub-resource
// writers and the REST plumbing, so what a step may do there is plain from its dependencies.
// The manager passes its clients; a step test passes an in-memory store (controller-runtime's
// fake client, which also applies server-side).
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

// ClientFunc returns a client for a runtime's own cluster, reached with cfg: the connection
// that kubeconfig.RESTConfig made of its admin kubeconfig. It may change cfg, a copy.
type ClientFunc func(ctx context.Context, cfg *rest.Config) (client.Client, error)
