package intern_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/runtime-ops/infrastructure-manager/internal/intern"
)

// sameData reports whether a and b share their bytes: one copy, not two equal ones.
func sameData(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// decoded returns two copies of shoot, decoded apart as a cache decodes each object.
func decoded(t *testing.T, shoot *gardencorev1beta1.Shoot) (*gardencorev1beta1.Shoot, *gardencorev1beta1.Shoot) {
	t.Helper()
	data, err := json.Marshal(shoot)
	if err != nil {
		t.Fatal(err)
	}
	a, b := &gardencorev1beta1.Shoot{}, &gardencorev1beta1.Shoot{}
	for _, s := range []*gardencorev1beta1.Shoot{a, b} {
		if err := json.Unmarshal(data, s); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func sampleShoot() *gardencorev1beta1.Shoot {
	s := &gardencorev1beta1.Shoot{}
	s.Name = "c-1a2b3c"
	s.Labels = map[string]string{"kyma-project.io/region": "eu-central-1", "kyma-project.io/runtime-id": "4f0b"}
	s.Annotations = map[string]string{"infrastructuremanager.kyma-project.io/applied-hash": "f294"}
	s.Spec.Region = "eu-central-1"
	s.Spec.Provider.Type = "aws"
	s.Spec.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(`{"kind":"InfrastructureConfig"}`)}
	s.Spec.Provider.Workers = []gardencorev1beta1.Worker{{Name: "cpu-worker-0", Zones: []string{"eu-central-1a"},
		Machine: gardencorev1beta1.Machine{Type: "m6i.large", Image: &gardencorev1beta1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To("1592.1.0")}}}}
	s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: map[string]bool{"SomeGate": true}}}
	s.Spec.SeedSelector = &gardencorev1beta1.SeedSelector{}
	s.Spec.SeedSelector.MatchLabels = map[string]string{"seed.gardener.cloud/region": "eu-central-1"}
	return s
}

func TestStringsSharesTheSettingsOfASpec(t *testing.T) {
	a, b := decoded(t, sampleShoot())
	if sameData(a.Spec.Region, b.Spec.Region) {
		t.Fatal("two decoded copies share their strings already: the test would show nothing")
	}
	want := a.DeepCopy()
	intern.Strings(&a.Spec)
	intern.Strings(&b.Spec)
	if diff := cmp.Diff(want, a); diff != "" {
		t.Fatalf("interning changed the object (-before +after):\n%s", diff)
	}
	for _, c := range []struct{ path, a, b string }{
		{"spec.region", a.Spec.Region, b.Spec.Region},
		{"spec.provider.type", a.Spec.Provider.Type, b.Spec.Provider.Type},
		{"worker name (in a slice)", a.Spec.Provider.Workers[0].Name, b.Spec.Provider.Workers[0].Name},
		{"zone (a string in a slice)", a.Spec.Provider.Workers[0].Zones[0], b.Spec.Provider.Workers[0].Zones[0]},
		{"image version (behind a pointer)", *a.Spec.Provider.Workers[0].Machine.Image.Version, *b.Spec.Provider.Workers[0].Machine.Image.Version},
		{"seed selector value (in a map)", a.Spec.SeedSelector.MatchLabels["seed.gardener.cloud/region"], b.Spec.SeedSelector.MatchLabels["seed.gardener.cloud/region"]},
		{"seed selector key", mapKey(a.Spec.SeedSelector.MatchLabels), mapKey(b.Spec.SeedSelector.MatchLabels)},
		{"feature gate (a key of a map of bools)", boolKey(a.Spec.Kubernetes.KubeAPIServer.FeatureGates), boolKey(b.Spec.Kubernetes.KubeAPIServer.FeatureGates)},
	} {
		if !sameData(c.a, c.b) {
			t.Errorf("%s: the two copies hold %q apart", c.path, c.a)
		}
	}
	if &a.Spec.Provider.InfrastructureConfig.Raw[0] == &b.Spec.Provider.InfrastructureConfig.Raw[0] {
		t.Error("raw JSON is shared: Strings must leave byte slices alone")
	}
}

func TestMetaSharesKeysNamesAndShortValues(t *testing.T) {
	shoot := sampleShoot()
	shoot.Namespace = "garden-kyma"
	shoot.Annotations["description"] = strings.Repeat("a long annotation value ", 4)
	a, b := decoded(t, shoot)
	want := a.DeepCopy()
	intern.Meta(a)
	intern.Meta(b)
	if diff := cmp.Diff(want, a); diff != "" {
		t.Fatalf("interning changed the object (-before +after):\n%s", diff)
	}
	for k := range a.Labels {
		if !sameData(k, keyOf(b.Labels, k)) {
			t.Errorf("label key %q is held twice", k)
		}
		if !sameData(a.Labels[k], b.Labels[k]) {
			t.Errorf("the value of label %q is held twice", k)
		}
	}
	for k := range a.Annotations {
		if !sameData(k, keyOf(b.Annotations, k)) {
			t.Errorf("annotation key %q is held twice", k)
		}
	}
	if !sameData(a.Name, b.Name) || !sameData(a.Namespace, b.Namespace) {
		t.Error("the name or the namespace is held twice")
	}
	const hash = "infrastructuremanager.kyma-project.io/applied-hash"
	if !sameData(a.Annotations[hash], b.Annotations[hash]) {
		t.Error("a short annotation value is held twice")
	}
	// Long values seldom repeat: interning them would only cost.
	if sameData(a.Annotations["description"], b.Annotations["description"]) {
		t.Error("a long annotation value is shared")
	}
}

func TestNothingToShare(t *testing.T) {
	intern.Strings(nil)
	var s *gardencorev1beta1.Shoot
	intern.Strings(s)
	intern.Strings(gardencorev1beta1.Shoot{}) // not a pointer: nothing can be set
	empty := &gardencorev1beta1.Shoot{}
	intern.Meta(empty)
	if empty.Labels != nil || empty.Annotations != nil {
		t.Errorf("Meta made maps for an object without labels or annotations: %v %v", empty.Labels, empty.Annotations)
	}
}

// mapKey returns the only key of m.
func mapKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// boolKey returns the only key of m.
func boolKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

// keyOf returns m's own copy of the key equal to k.
func keyOf(m map[string]string, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return ""
}

// TestMapSharesOneMapPerContents: maps with the same entries come back as one map, maps with
// others as themselves, and a full table starts afresh without losing an entry.
func TestMapSharesOneMapPerContents(t *testing.T) {
	one := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	a := intern.Map(map[string]string{"oidc-input": "ab06", "x": ""})
	b := intern.Map(map[string]string{"x": "", "oidc-input": "ab06"})
	if one(a) != one(b) {
		t.Error("two maps with the same entries are kept apart")
	}
	c := intern.Map(map[string]string{"oidc-input": "ab07", "x": ""})
	if one(c) == one(a) || c["oidc-input"] != "ab07" {
		t.Errorf("a map with other entries came back as %v", c)
	}
	// Entries that only run together differently are different maps.
	d := intern.Map(map[string]string{"oidc-input": "ab06x", "": ""})
	if d["oidc-input"] != "ab06x" || len(d) != 2 {
		t.Errorf("a map came back as %v", d)
	}
	for i := range 3000 {
		m := map[string]string{"n": strconv.Itoa(i)}
		if got := intern.Map(m); got["n"] != strconv.Itoa(i) || len(got) != 1 {
			t.Fatalf("map %d came back as %v", i, got)
		}
	}
	if intern.Map(nil) != nil || len(intern.Map(map[string]string{})) != 0 {
		t.Error("an empty map changed")
	}
}

func TestConditionsShareWhatRepeatsAndKeepTheirOwnMessages(t *testing.T) {
	// decode gives each runtime's conditions their own strings, as a cache decodes each object.
	decode := func(shoot string) []metav1.Condition {
		raw, err := json.Marshal([]metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: "All steps succeeded"},
			{Type: "Provisioned", Status: metav1.ConditionTrue, Reason: "ShootReady", Message: "Shoot " + shoot + " is reconciled"},
		})
		if err != nil {
			t.Fatal(err)
		}
		var conds []metav1.Condition
		if err := json.Unmarshal(raw, &conds); err != nil {
			t.Fatal(err)
		}
		return conds
	}
	a, b := decode("s1"), decode("s1")
	a = append(a, make([]metav1.Condition, 5)...)[:2] // spare room, as a decoder leaves it
	want := slices.Clone(a)
	a, b = intern.Conditions(a, "rt-1", "s1"), intern.Conditions(b, "rt-2", "s1")
	if diff := cmp.Diff(want, a); diff != "" {
		t.Fatalf("interning changed the conditions (-before +after):\n%s", diff)
	}
	if cap(a) != len(a) {
		t.Errorf("capacity %d for %d conditions: the spare room is kept", cap(a), len(a))
	}
	for i := range a {
		if !sameData(a[i].Type, b[i].Type) || !sameData(a[i].Reason, b[i].Reason) || !sameData(string(a[i].Status), string(b[i].Status)) {
			t.Errorf("condition %s: its type, reason or status is held twice", a[i].Type)
		}
	}
	if !sameData(a[0].Message, b[0].Message) {
		t.Errorf("message %q, which names no object, is held twice", a[0].Message)
	}
	// A message that names the object is its own: a table entry for it would only cost.
	if sameData(a[1].Message, b[1].Message) {
		t.Errorf("message %q, which names the shoot, is shared", a[1].Message)
	}
	if got := intern.Conditions(nil); got != nil {
		t.Errorf("Conditions(nil) = %v, want nil", got)
	}
}
