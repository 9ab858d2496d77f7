package deploy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestOnlyTheManagerWritesGardenerClusters: with the install's admission policy in force, the
// control plane's admin may not create a GardenerCluster (one would ask the manager for any
// shoot's admin kubeconfig), and the manager's ServiceAccount may create and change one.
func TestOnlyTheManagerWritesGardenerClusters(t *testing.T) {
	gc := func(name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "infrastructuremanager.kyma-project.io/v1",
			"kind":       "GardenerCluster",
			"metadata":   map[string]any{"name": name, "namespace": installed.deployment.Namespace},
			"spec": map[string]any{
				"shoot":      map[string]any{"name": "someone-elses"},
				"kubeconfig": map[string]any{"secret": map[string]any{"name": "kubeconfig-" + name, "namespace": installed.deployment.Namespace, "key": "config"}},
			},
		}}
		return o
	}
	// A policy is in force once the API server has loaded it, shortly after it was applied.
	var refusal error
	err := testenv.Eventually(t.Context(), 30*time.Second, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		o := gc("by-admin")
		refusal = env.Client.Create(ctx, o)
		if refusal == nil {
			return false, env.Client.Delete(ctx, o)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the admin could still create GardenerClusters: %v", err)
	}
	if !strings.Contains(refusal.Error(), "GardenerClusters are written only by the infrastructure manager") {
		t.Errorf("the admin's create failed with %v, want the policy's refusal", refusal)
	}

	manager, err := client.New(installed.config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := gc("by-manager")
	if err := manager.Create(t.Context(), o); err != nil {
		t.Fatalf("the manager's ServiceAccount may not create a GardenerCluster: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	// Merge patches, not updates: the running manager writes the GardenerCluster's status as
	// soon as it sees it, and an update carrying the created resourceVersion would conflict.
	// A patch is an UPDATE to admission all the same.
	if err := manager.Patch(t.Context(), o, labelPatch("true")); err != nil {
		t.Errorf("the manager's ServiceAccount may not change a GardenerCluster: %v", err)
	}
	if err := env.Client.Patch(t.Context(), o, labelPatch("by-admin")); err == nil {
		t.Error("the admin changed the manager's GardenerCluster")
	} else if !strings.Contains(err.Error(), "GardenerClusters are written only by the infrastructure manager") {
		t.Errorf("the admin's change failed with %v, want the policy's refusal", err)
	}
}

// labelPatch is a JSON merge patch setting the label changed to value.
func labelPatch(value string) client.Patch {
	return client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"changed":"`+value+`"}}}`))
}
