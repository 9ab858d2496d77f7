package intern

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StoredMeta is the metadata of an object that a cache keeps in a stored form of its own:
// ObjectMeta without its labels and annotations, which it keeps as Pairs. A stored form embeds
// it and so is a metav1.Object whose GetLabels and GetAnnotations build new maps; it builds the
// object it keeps with CopyMetaInto. Labels or annotations without entries read as none (nil),
// as the API server serves them.
type StoredMeta struct {
	metav1.ObjectMeta
	labels, annotations Pairs
}

// StoreMeta keeps m, whose parts the result takes over.
func StoreMeta(m metav1.ObjectMeta) StoredMeta {
	s := StoredMeta{ObjectMeta: m, labels: PairsOf(m.Labels), annotations: PairsOf(m.Annotations)}
	s.Labels, s.Annotations = nil, nil
	return s
}

// CopyMetaInto sets out to the metadata s keeps, sharing nothing with s.
func (s *StoredMeta) CopyMetaInto(out *metav1.ObjectMeta) {
	s.DeepCopyInto(out)
	out.Labels, out.Annotations = s.labels.Map(), s.annotations.Map()
}

// GetLabels returns a new map of the labels (handlers, predicates, indexes and label selectors
// read them). It hides ObjectMeta's, which holds none.
func (s *StoredMeta) GetLabels() map[string]string { return s.labels.Map() }

// GetAnnotations returns a new map of the annotations. It hides ObjectMeta's, which holds none.
func (s *StoredMeta) GetAnnotations() map[string]string { return s.annotations.Map() }

// SetLabels keeps m's entries as the labels.
func (s *StoredMeta) SetLabels(m map[string]string) { s.labels = PairsOf(m) }

// SetAnnotations keeps m's entries as the annotations.
func (s *StoredMeta) SetAnnotations(m map[string]string) { s.annotations = PairsOf(m) }

// Label returns the value of the label key, "" when there is none, without building a map.
func (s *StoredMeta) Label(key string) string {
	v, _ := s.labels.Get(key)
	return v
}

// GetObjectKind implements runtime.Object for the stored form: it keeps no kind, and the cache
// sets the kind on the copies it hands out.
func (s *StoredMeta) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
