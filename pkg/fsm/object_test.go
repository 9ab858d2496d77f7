package fsm_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fsmv1 "github.com/runtime-ops/infrastructure-manager/pkg/fsm/api/v1"
)

// widgetGroupVersion is the made-up API group of the widget.
var widgetGroupVersion = schema.GroupVersion{Group: "example.test", Version: "v1"}

// retryAnnotation is the widget API's manual-retry annotation.
const retryAnnotation = "example.test/retry-requested-at"

// widget is the object the tests drive: a made-up kind whose status is the engine's alone, to show
// that the engine needs no more of an object.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            widgetStatus `json:"status,omitempty"`
}

// widgetStatus embeds the engine's status inline, as a CRD does.
type widgetStatus struct {
	fsmv1.EngineStatus `json:",inline"`
}

// EngineStatus makes a widget an fsm.Object.
func (w *widget) EngineStatus() *fsmv1.EngineStatus { return &w.Status.EngineStatus }

// DeepCopyInto copies w into out.
func (w *widget) DeepCopyInto(out *widget) {
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	w.Status.DeepCopyInto(&out.Status)
}

// DeepCopyInto copies s into out.
func (s *widgetStatus) DeepCopyInto(out *widgetStatus) {
	s.EngineStatus.DeepCopyInto(&out.EngineStatus)
}

// DeepCopyObject implements runtime.Object.
func (w *widget) DeepCopyObject() runtime.Object {
	out := &widget{}
	w.DeepCopyInto(out)
	return out
}

// widgetList is the list kind a scheme needs beside the widget.
type widgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

// DeepCopyInto copies l into out.
func (l *widgetList) DeepCopyInto(out *widgetList) {
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]widget, len(l.Items))
	for i := range l.Items {
		l.Items[i].DeepCopyInto(&out.Items[i])
	}
}

// DeepCopyObject implements runtime.Object.
func (l *widgetList) DeepCopyObject() runtime.Object {
	out := &widgetList{}
	l.DeepCopyInto(out)
	return out
}

// addWidgets registers the widget kinds with a scheme.
func addWidgets(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(widgetGroupVersion.WithKind("Widget"), &widget{})
	s.AddKnownTypeWithName(widgetGroupVersion.WithKind("WidgetList"), &widgetList{})
	metav1.AddToGroupVersion(s, widgetGroupVersion)
	return nil
}
