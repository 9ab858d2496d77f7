package runtime

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// gardenWithoutCache is a garden cluster whose cache, the source of the shoot watch, the test
// counts the uses of; nothing else of it is used by Setup.
type gardenWithoutCache struct {
	cluster.Cluster
	caches int
}

func (g *gardenWithoutCache) GetCache() cache.Cache {
	g.caches++
	return nil
}

// TestSetupWatchesShootsUnlessUnwatched registers the controller with and without
// UnwatchedShoots. The shoot watch on the garden cache is there by default. With UnwatchedShoots
// the controller has none, so only the waiting steps' polls look at a shoot.
func TestSetupWatchesShootsUnlessUnwatched(t *testing.T) {
	for _, unwatched := range []bool{false, true} {
		mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
			Scheme:     scheme(t),
			Metrics:    metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
			// No API server: the kinds Setup registers informers and the index for are mapped here.
			MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
				m := meta.NewDefaultRESTMapper(nil)
				m.Add(infrav1.GroupVersion.WithKind("Runtime"), meta.RESTScopeNamespace)
				m.Add(infrav1.GroupVersion.WithKind("GardenerCluster"), meta.RESTScopeNamespace)
				return m, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		garden := &gardenWithoutCache{}
		w := newWorld(t)
		cfg := w.steps.Config
		cfg.UnwatchedShoots, cfg.Workers = unwatched, 1
		if err := Setup(mgr, garden, cfg); err != nil {
			t.Fatalf("unwatched %t: %v", unwatched, err)
		}
		if watched := garden.caches > 0; watched == unwatched {
			t.Errorf("unwatched shoots %t: shoots watched %t, want %t", unwatched, watched, !unwatched)
		}
	}
}
