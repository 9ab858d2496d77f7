package manager

import (
	"context"
	"fmt"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
)

// cachedFleet is the fleetSource of a manager: the Runtimes and GardenerClusters its cache holds.
type cachedFleet struct {
	// runtimes are the Runtimes in the form the cache stores them (runtimectrl.StoredRuntime).
	runtimes *cachedObjects[*runtimectrl.StoredRuntime]
	// clusters are the GardenerClusters in the form the cache stores them (storedCluster).
	clusters *cachedObjects[*storedCluster]
}

// watchFleet follows the informers of the Runtimes and GardenerClusters in informers. It
// starts none: the cache starts them with the manager.
func watchFleet(ctx context.Context, informers cache.Informers) (cachedFleet, error) {
	runtimes, err := watchCached(ctx, informers, &infrav1.Runtime{}, runtimectrl.StoredRuntimeOf)
	if err != nil {
		return cachedFleet{}, err
	}
	clusters, err := watchCached(ctx, informers, &infrav1.GardenerCluster{}, clusterOf)
	if err != nil {
		return cachedFleet{}, err
	}
	return cachedFleet{runtimes: runtimes, clusters: clusters}, nil
}

// Runtimes implements fleetSource.
func (f cachedFleet) Runtimes() ([]*runtimectrl.StoredRuntime, bool) { return f.runtimes.list() }

// Clusters implements fleetSource.
func (f cachedFleet) Clusters() ([]*storedCluster, bool) { return f.clusters.list() }

// cachedObjects keeps a pointer to each object of one kind that an informer holds. A List from
// the cache, even one that makes no deep copies, copies every object into its items: 6 MB at
// each scrape of 5,000 runtimes. The pointers are the cache's own objects, which the informer
// replaces and never changes; nothing here writes to them.
type cachedObjects[T client.Object] struct {
	mu      sync.Mutex
	objects map[client.ObjectKey]T
	synced  func() bool
	// of is the T an object of the informer is, false for an object of another kind.
	of func(any) (T, bool)
}

// watchCached follows the informer of kind's kind in informers; of reads each of its objects
// as a T: the kind's type, or the form the cache's transform stores it in.
func watchCached[T client.Object](ctx context.Context, informers cache.Informers, kind client.Object, of func(any) (T, bool)) (*cachedObjects[T], error) {
	informer, err := informers.GetInformer(ctx, kind)
	if err != nil {
		return nil, fmt.Errorf("informer of %T: %w", kind, err)
	}
	c := &cachedObjects[T]{objects: map[client.ObjectKey]T{}, of: of}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    c.put,
		UpdateFunc: func(_, obj any) { c.put(obj) },
		DeleteFunc: c.remove,
	})
	if err != nil {
		return nil, fmt.Errorf("follow the informer of %T: %w", kind, err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

func (c *cachedObjects[T]) put(obj any) {
	o, ok := c.of(obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects[client.ObjectKeyFromObject(o)] = o
}

func (c *cachedObjects[T]) remove(obj any) {
	if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	o, ok := c.of(obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, client.ObjectKeyFromObject(o))
}

// list returns the objects, in no order, once the informer has handed over its first list.
func (c *cachedObjects[T]) list() ([]T, bool) {
	if !c.synced() {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]T, 0, len(c.objects))
	for _, o := range c.objects {
		out = append(out, o)
	}
	return out, true
}
