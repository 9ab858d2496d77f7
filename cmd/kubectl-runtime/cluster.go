package main

import (
	"context"
	"fmt"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// scheme knows the Runtime API and Kubernetes' own types.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := infrav1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// cluster is the API server the caller's kubeconfig points at, and the namespace the command
// works in (-n, or the context's namespace).
type cluster struct {
	client    client.Client
	namespace string
}

// connect builds a client from the kubectl flags.
func (r *root) connect() (*cluster, error) {
	cfg, err := r.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := r.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	return &cluster{client: c, namespace: ns}, nil
}

// runtime reads one Runtime; a missing one is an error that says where the command looked.
func (c *cluster) runtime(ctx context.Context, name string) (*infrav1.Runtime, error) {
	rt := &infrav1.Runtime{}
	err := c.client.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: name}, rt)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("runtime %q not found in namespace %q (Runtimes live in kcp-system on a landscape: -n kcp-system)", name, c.namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("get runtime %s/%s: %w", c.namespace, name, err)
	}
	return rt, nil
}

// gardenerCluster reads the Runtime's GardenerCluster, named after its runtime id; nil when the
// manager has not created it (yet, or any more).
func (c *cluster) gardenerCluster(ctx context.Context, rt *infrav1.Runtime) (*infrav1.GardenerCluster, error) {
	id := rt.Labels[infrav1.LabelRuntimeID]
	if id == "" {
		return nil, nil
	}
	gc := &infrav1.GardenerCluster{}
	err := c.client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: id}, gc)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get gardenercluster %s/%s: %w", rt.Namespace, id, err)
	}
	return gc, nil
}

// events lists the Events the manager recorded for the Runtime (events.k8s.io, which the
// manager writes), oldest first.
func (c *cluster) events(ctx context.Context, rt *infrav1.Runtime) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	sel := fields.OneTermEqualSelector("regarding.uid", string(rt.UID))
	if err := c.client.List(ctx, list, client.InNamespace(rt.Namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list events of runtime %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	sortEvents(list.Items)
	return list.Items, nil
}
