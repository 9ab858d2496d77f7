package runtime

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// randomRuntimes fills n Runtimes with random values in every field, as a check that the stored
// form keeps all of a Runtime.
func randomRuntimes(n int) []*infrav1.Runtime {
	f := randfill.NewWithSeed(33).NilChance(0.2).NumElements(0, 3).Funcs(
		func(m *map[string]string, c randfill.Continue) {
			*m = map[string]string{}
			for range c.Intn(16) {
				(*m)["kyma-project.io/"+c.String(6)] = c.String(10)
			}
			if c.Bool() {
				(*m)[infrav1.LabelRuntimeID] = c.String(8)
			}
		},
		func(r *kruntime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				r.Raw = []byte(`{"kind":"` + c.String(8) + `"}`)
			}
		},
		func(q *resource.Quantity, _ randfill.Continue) { *q = resource.MustParse("50Gi") },
		func(v *intstr.IntOrString, c randfill.Continue) { *v = intstr.FromInt32(c.Int31()) },
	)
	out := make([]*infrav1.Runtime, n)
	for i := range out {
		out[i] = &infrav1.Runtime{}
		f.Fill(out[i])
		out[i].TypeMeta = metav1.TypeMeta{}
	}
	return out
}

// readable is rt as a read of the stored form gives it back: labels and annotations without
// entries read as none, as the API server serves them.
func readable(rt *infrav1.Runtime) *infrav1.Runtime {
	want := rt.DeepCopy()
	if len(want.Labels) == 0 {
		want.Labels = nil
	}
	if len(want.Annotations) == 0 {
		want.Annotations = nil
	}
	return want
}

// TestStoredRuntimeReadsAsStored: what a read through the cache gets (the stored form's copy) is
// the Runtime that was stored, field for field, for Runtimes with every field filled at random;
// and the informer's readers (handlers, predicates, the two indexes, the object metrics) read
// the same of the stored form as of the Runtime. A field the stored form drops fails here.
func TestStoredRuntimeReadsAsStored(t *testing.T) {
	for i, rt := range randomRuntimes(200) {
		want := readable(rt)
		stored := StoreRuntime(rt.DeepCopy())
		got, ok := stored.DeepCopyObject().(*infrav1.Runtime)
		if !ok {
			t.Fatalf("runtime %d: the copy of the stored form is a %T, not a Runtime", i, stored.DeepCopyObject())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("runtime %d: a read gets another Runtime than was stored (-stored +read):\n%s", i, diff)
		}
		if !cmp.Equal(stored.GetLabels(), want.Labels) || !cmp.Equal(stored.GetAnnotations(), want.Annotations) {
			t.Fatalf("runtime %d: the stored form's labels or annotations differ", i)
		}
		if stored.GetName() != want.Name || stored.GetNamespace() != want.Namespace || stored.GetGeneration() != want.Generation {
			t.Fatalf("runtime %d: the stored form's name, namespace or generation differ", i)
		}
		for k, v := range want.Labels {
			if stored.Label(k) != v {
				t.Fatalf("runtime %d: label %q is %q in the stored form, want %q", i, k, stored.Label(k), v)
			}
		}
		if !slices.Equal(shootNameOf(stored), shootNameOf(rt)) || !slices.Equal(runtimeIDOf(stored), runtimeIDOf(rt)) {
			t.Fatalf("runtime %d: the indexes file the stored form under %v and %v, the Runtime under %v and %v",
				i, shootNameOf(stored), runtimeIDOf(stored), shootNameOf(rt), runtimeIDOf(rt))
		}
		if !cmp.Equal(runtimeLabels(stored), runtimeLabels(rt)) {
			t.Fatalf("runtime %d: the series of the stored form are labelled %v, of the Runtime %v", i, runtimeLabels(stored), runtimeLabels(rt))
		}
		if of, ok := StoredRuntimeOf(stored); !ok || of != stored {
			t.Fatalf("runtime %d: StoredRuntimeOf of the stored form is %p, %v; want it as it is", i, of, ok)
		}
		if of, ok := StoredRuntimeOf(rt); !ok || !cmp.Equal(of.DeepCopyObject(), want) {
			t.Fatalf("runtime %d: StoredRuntimeOf of a Runtime (a cache without the transform) reads otherwise", i)
		}
	}
}

// TestStoredRuntimeCopiesShareNothing: a step changes the Runtime it read; the next read gets it
// as stored.
func TestStoredRuntimeCopiesShareNothing(t *testing.T) {
	for i, rt := range randomRuntimes(50) {
		stored := StoreRuntime(rt)
		first := stored.DeepCopyObject().(*infrav1.Runtime)
		want := first.DeepCopy()
		first.Name += "-changed"
		first.Finalizers = append(first.Finalizers[:0:0], "changed")
		for k := range first.Labels {
			first.Labels[k] = "changed"
		}
		if first.Annotations != nil {
			first.Annotations["changed"] = "true"
		}
		first.Spec.Shoot.Name = "changed"
		for j := range first.Spec.Shoot.Provider.Workers {
			w := &first.Spec.Shoot.Provider.Workers[j]
			w.Machine.Type = "changed"
			if len(w.Zones) > 0 {
				w.Zones[0] = "changed"
			}
		}
		for j := range first.Spec.Security.Administrators {
			first.Spec.Security.Administrators[j] = "changed"
		}
		first.Status.State = "changed"
		for j := range first.Status.Conditions {
			first.Status.Conditions[j].Message = "changed"
		}
		if st := first.Status.Step; st != nil {
			st.Name = "changed"
		}
		if diff := cmp.Diff(want, stored.DeepCopyObject()); diff != "" {
			t.Fatalf("runtime %d: a change of a read copy reached the cache (-before +after):\n%s", i, diff)
		}
	}
}
