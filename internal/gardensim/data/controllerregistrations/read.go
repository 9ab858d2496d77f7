package controllerregistrations

import (
	_ "embed"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/yaml"
)

// manifests holds every ControllerRegistration, as one YAML list.
//
//go:embed controllerregistrations.yaml
var manifests []byte

// Read parses the embedded ControllerRegistrations strictly: a field the
// type does not know is an error. Each call returns new objects.
func Read() ([]gardencorev1beta1.ControllerRegistration, error) {
	var registrations []gardencorev1beta1.ControllerRegistration
	if err := yaml.UnmarshalStrict(manifests, &registrations); err != nil {
		return nil, fmt.Errorf("parse controller registrations: %w", err)
	}
	return registrations, nil
}

// ExtensionTypes are the types of kind Extension the registrations
// register, in file order.
func ExtensionTypes(registrations []gardencorev1beta1.ControllerRegistration) []string {
	var types []string
	for _, r := range registrations {
		for _, res := range r.Spec.Resources {
			if res.Kind == extensionsv1alpha1.ExtensionResource {
				types = append(types, res.Type)
			}
		}
	}
	return types
}
