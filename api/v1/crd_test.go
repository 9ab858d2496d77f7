package v1_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPrinterColumns checks that `kubectl get` shows what an operator needs first.
func TestPrinterColumns(t *testing.T) {
	cases := []struct {
		crd     string            // name of the CRD
		columns map[string]string // column name to JSONPath
	}{
		{"runtimes.infrastructuremanager.kyma-project.io", map[string]string{
			"State":      ".status.state",
			"Step":       ".status.step.name",
			"Attempt":    ".status.retry.attempt",
			"Next Retry": ".status.retry.nextRetryAt",
			"Age":        ".metadata.creationTimestamp",
		}},
		{"gardenerclusters.infrastructuremanager.kyma-project.io", map[string]string{
			"State": ".status.state",
			"Step":  ".status.step.name",
		}},
	}
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.crd, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(t.Context(), types.NamespacedName{Name: tc.crd}, crd); err != nil {
				t.Fatal(err)
			}
			got, types := map[string]string{}, map[string]string{}
			for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				got[col.Name], types[col.Name] = col.JSONPath, col.Type
			}
			// A date column renders a time ahead of now as <invalid>: the next retry is shown as
			// the time itself.
			if _, ok := tc.columns["Next Retry"]; ok && types["Next Retry"] != "string" {
				t.Errorf("column Next Retry has type %q, want string", types["Next Retry"])
			}
			for name, path := range tc.columns {
				if got[name] != path {
					t.Errorf("column %q: got JSONPath %q, want %q", name, got[name], path)
				}
			}
		})
	}
}
