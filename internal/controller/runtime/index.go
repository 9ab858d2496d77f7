package runtime

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// indexRuntimes indexes the Runtimes in c by field, as the cache's IndexField does, but only
// under the key a List in one namespace looks up (client.InNamespace with client.MatchingFields):
// "field:<field>" holding "<namespace>/<value>". IndexField also files every value under all
// namespaces, which no step asks for; at 5,000 Runtimes those second entries of the two indexes
// were about 4.5 MB of one-element sets. The key format is controller-runtime's (its
// cache/internal FieldIndexName and KeyToNamespacedKey); the integration test that refuses a
// second Runtime with one runtime id (TestRuntimeIDBelongsToTheFirstRuntime) fails when the
// keys are not the ones the client looks up.
func indexRuntimes(ctx context.Context, c cache.Cache, field string, extract client.IndexerFunc) error {
	informer, err := c.GetInformer(ctx, &infrav1.Runtime{})
	if err != nil {
		return fmt.Errorf("informer of Runtimes: %w", err)
	}
	byNamespace := func(raw any) ([]string, error) {
		obj, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index %s: %T is not an object", field, raw)
		}
		values := extract(obj)
		keys := make([]string, len(values))
		for i, v := range values {
			keys[i] = obj.GetNamespace() + "/" + v
		}
		return keys, nil
	}
	if err := informer.AddIndexers(toolscache.Indexers{"field:" + field: byNamespace}); err != nil {
		return fmt.Errorf("index Runtimes by %s: %w", field, err)
	}
	return nil
}
