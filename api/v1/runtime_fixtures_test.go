package v1_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestUpstreamFixturesAreAcceptedUnchanged creates every upstream manifest with strict field
// validation (unknown or duplicate fields fail) and reads it back: every field the manifest set
// must come back equal, so nothing was pruned.
func TestUpstreamFixturesAreAcceptedUnchanged(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			objs, err := testenv.ReadObjects(file)
			if err != nil {
				t.Fatal(err)
			}
			want := objs[0]
			obj := want.DeepCopy()
			if err := env.Client.Create(t.Context(), obj, client.FieldValidation("Strict")); err != nil {
				t.Fatalf("create %s: %v", file, err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(t.Context(), obj) })

			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(want), got); err != nil {
				t.Fatal(err)
			}
			testenv.AssertSubset(t, "", want.Object, got.Object)
		})
	}
}

// TestUpstreamFixturesDecodeIntoTypes checks that the Go types hold every field of the upstream
// manifests: strict decoding fails on a field the types lack, and encoding again loses nothing.
func TestUpstreamFixturesDecodeIntoTypes(t *testing.T) {
	for _, file := range fixtureFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var rt infrav1.Runtime
			if err := yaml.UnmarshalStrict(data, &rt); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			encoded, err := yaml.Marshal(&rt)
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := yaml.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(encoded, &got); err != nil {
				t.Fatal(err)
			}
			testenv.AssertSubset(t, "", want, got)
		})
	}
}

// TestRegistryCacheCredentialsAccepted creates a Runtime whose registry cache names credentials,
// a field upstream's API has and the maximal Runtimes leave out because the render refuses it:
// the API keeps it, so the refusal is the manager's, with a reason in the status.
func TestRegistryCacheCredentialsAccepted(t *testing.T) {
	objs, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "runtimes", "maximal-aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := objs[0]
	caches, _, err := unstructured.NestedSlice(want.Object, "spec", "imageRegistryCache")
	if err != nil || len(caches) == 0 {
		t.Fatalf("maximal-aws has no registry cache: %v", err)
	}
	if err := unstructured.SetNestedField(caches[0].(map[string]any), "images-credentials", "config", "secretReferenceName"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(want.Object, caches, "spec", "imageRegistryCache"); err != nil {
		t.Fatal(err)
	}
	want.SetName("registry-cache-credentials")
	obj := want.DeepCopy()
	if err := env.Client.Create(t.Context(), obj, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), obj) })
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(want.GroupVersionKind())
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(want), got); err != nil {
		t.Fatal(err)
	}
	testenv.AssertSubset(t, "", want.Object, got.Object)
}
