package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUpToDate decides whether a re-check writes: only a ConfigMap last applied with the same
// configuration that still holds its values is left alone.
func TestUpToDate(t *testing.T) {
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "garden-kyma", Labels: map[string]string{"a": "1"}},
		Data: map[string]string{"config.yaml": "x"}}
	ac, err := applyConfiguration(want)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := withAppliedHash(ac)
	if err != nil {
		t.Fatal(err)
	}
	stored := func(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := want.DeepCopy()
		cm.Annotations = map[string]string{AnnotationAppliedHash: hash, "other": "kept"}
		cm.Labels["b"] = "another manager's"
		cm.ResourceVersion = "7"
		mutate(cm)
		return cm
	}
	tests := []struct {
		name    string
		current *corev1.ConfigMap
		want    bool
	}{
		{"as applied, with more from others", stored(func(*corev1.ConfigMap) {}), true},
		{"missing", nil, false},
		{"a value drifted", stored(func(cm *corev1.ConfigMap) { cm.Data["config.yaml"] = "y" }), false},
		{"a label drifted", stored(func(cm *corev1.ConfigMap) { delete(cm.Labels, "a") }), false},
		{"applied by someone else (no hash)", stored(func(cm *corev1.ConfigMap) { delete(cm.Annotations, AnnotationAppliedHash) }), false},
		{"applied with another configuration", stored(func(cm *corev1.ConfigMap) { cm.Annotations[AnnotationAppliedHash] = "0" }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := upToDate(ac, tt.current)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("upToDate = %v, want %v", got, tt.want)
			}
		})
	}
}
