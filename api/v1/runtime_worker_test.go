package v1_test

import (
	"reflect"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// TestTypesCoverGardenerFields checks that the Runtime API's copies of Gardener types have every
// JSON field of Gardener's own: upstream's Runtime embeds Gardener's Worker and OIDCConfig, so
// a field Gardener has and the copy lacks would be pruned from an upstream Runtime. When the
// Gardener module is updated, this test names the fields to add.
func TestTypesCoverGardenerFields(t *testing.T) {
	cases := []struct {
		name     string // the Gardener type
		gardener any    // a zero value of Gardener's type
		ours     any    // a zero value of the Runtime API's copy
	}{
		{"Worker", gardencorev1beta1.Worker{}, infrav1.Worker{}},
		{"Machine", gardencorev1beta1.Machine{}, infrav1.Machine{}},
		{"ShootMachineImage", gardencorev1beta1.ShootMachineImage{}, infrav1.ShootMachineImage{}},
		{"Volume", gardencorev1beta1.Volume{}, infrav1.Volume{}},
		{"DataVolume", gardencorev1beta1.DataVolume{}, infrav1.DataVolume{}},
		{"CRI", gardencorev1beta1.CRI{}, infrav1.CRI{}},
		{"ContainerRuntime", gardencorev1beta1.ContainerRuntime{}, infrav1.ContainerRuntime{}},
		{"OIDCConfig", gardencorev1beta1.OIDCConfig{}, infrav1.OIDCConfig{}},
		{"ControlPlane", gardencorev1beta1.ControlPlane{}, infrav1.ControlPlane{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ours := jsonFields(reflect.TypeOf(tc.ours))
			for name := range jsonFields(reflect.TypeOf(tc.gardener)) {
				if !ours[name] {
					t.Errorf("Gardener's %s has field %q, the Runtime API's copy does not", tc.name, name)
				}
			}
		})
	}
}

// jsonFields returns the JSON names of a struct type's fields, inlined fields included.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			for n := range jsonFields(f.Type) {
				out[n] = true
			}
			continue
		}
		out[name] = true
	}
	return out
}
