package landscape

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

// TestAllTolerations checks that the tolerations of all regions come once each, in region order.
func TestAllTolerations(t *testing.T) {
	dedicated := gardencorev1beta1.Toleration{Key: "project.gardener.cloud/dedicated", Value: ptr.To("kyma")}
	webhooks := gardencorev1beta1.Toleration{Key: "ValidatingWebhooks"}
	l := &Landscape{}
	l.Config.Converter.Tolerations = map[string][]gardencorev1beta1.Toleration{
		"westeurope": {dedicated},
		"eu-de-1":    {webhooks},
		"eastus":     {dedicated},
	}
	got := l.AllTolerations()
	want := []gardencorev1beta1.Toleration{dedicated, webhooks}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("AllTolerations() = %v, want %v", got, want)
	}
}
