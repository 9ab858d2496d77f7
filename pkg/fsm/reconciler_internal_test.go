package fsm

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStatusJSONEncodesTheStatusAlone: the status field encoded alone gives the bytes that
// cutting it out of the whole object's encoding gives, and an object without a status gives {}.
func TestStatusJSONEncodesTheStatusAlone(t *testing.T) {
	whole := func(obj client.Object) string {
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var cut struct {
			Status json.RawMessage `json:"status,omitempty"`
		}
		if err := json.Unmarshal(data, &cut); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(cut)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Message: `quoted "and" <escaped>`,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if _, ok := statusField(pod); !ok {
		t.Fatal("a Pod's status field was not found")
	}
	for name, obj := range map[string]client.Object{
		"with a status":        pod,
		"with an empty status": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "empty"}},
		"without a status":     &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}},
	} {
		got, err := statusJSON(obj)
		if err != nil {
			t.Fatal(err)
		}
		if want := whole(obj); string(got) != want {
			t.Errorf("%s: statusJSON %s, want %s", name, got, want)
		}
	}
}

// Remembered is how many objects r remembers a write of, for the tests.
func (r *Reconciler[T]) Remembered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.written)
}
