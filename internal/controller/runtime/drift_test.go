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

// TestDifference names the first path, keys in order, at which got does not hold want: what
// the log line of a re-check that writes says.
func TestDifference(t *testing.T) {
	got := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"a": "1", "b": "2"}},
		"spec":     map[string]any{"workers": []any{map[string]any{"name": "w0", "max": 3.0}}, "purpose": "evaluation"},
	}
	tests := []struct {
		name string
		want any
		path string
	}{
		{"a subset is held", map[string]any{"spec": map[string]any{"purpose": "evaluation"}}, ""},
		{"a changed value", map[string]any{"spec": map[string]any{"purpose": "production"}}, ".spec.purpose"},
		{"a list element", map[string]any{"spec": map[string]any{"workers": []any{map[string]any{"max": 5.0}}}}, ".spec.workers[0].max"},
		{"a list of another length", map[string]any{"spec": map[string]any{"workers": []any{}}}, ".spec.workers"},
		{"the first of two in key order", map[string]any{"metadata": map[string]any{"labels": map[string]any{"b": "x", "a": "y"}}}, ".metadata.labels.a"},
		{"a missing key", map[string]any{"status": map[string]any{"x": 1.0}}, ".status"},
		{"another type at the root", []any{}, "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if path := difference(got, tt.want, ""); path != tt.path {
				t.Errorf("difference %q, want %q", path, tt.path)
			}
			if held := contains(got, tt.want); held != (tt.path == "") {
				t.Errorf("contains %t, want %t", held, tt.path == "")
			}
		})
	}
}
