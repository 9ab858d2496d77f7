package deploy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRenderSetsTheImage renders the shipped kustomization with and without an image: the
// manager's container runs the one given, and a kustomization without the manager's Deployment
// cannot take one.
func TestRenderSetsTheImage(t *testing.T) {
	root := filepath.Join("..", "..")
	tests := []struct {
		// name describes the case.
		name string
		// dir is the kustomization, image the image asked for.
		dir, image string
		// want is the manager's image in the result; empty means an error.
		want string
	}{
		{name: "as configured", dir: DefaultDir, want: "infrastructure-manager:latest"},
		{name: "an image of one's own", dir: DefaultDir, image: "infrastructure-manager:v1.2.3", want: "infrastructure-manager:v1.2.3"},
		{name: "no Deployment", dir: filepath.Join("config", "crd"), image: "infrastructure-manager:v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Render(filepath.Join(root, tt.dir), tt.image)
			if tt.want == "" {
				if err == nil {
					t.Fatal("rendered without error, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			objs, err := Objects(out)
			if err != nil {
				t.Fatal(err)
			}
			var images []string
			for _, o := range objs {
				if o.GetKind() != "Deployment" {
					continue
				}
				containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range containers {
					if c, ok := c.(map[string]any); ok && c["name"] == ManagerContainer {
						images = append(images, fmt.Sprint(c["image"]))
					}
				}
			}
			if len(images) != 1 || images[0] != tt.want {
				t.Errorf("manager images %v, want [%s]", images, tt.want)
			}
			if !strings.HasPrefix(string(out), "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition") {
				t.Error("the CRDs do not come first")
			}
		})
	}
}
