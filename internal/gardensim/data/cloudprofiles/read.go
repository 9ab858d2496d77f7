package cloudprofiles

import (
	_ "embed"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/yaml"
)

// manifests holds every CloudProfile, as one YAML list.
//
//go:embed cloudprofiles.yaml
var manifests []byte

// Read parses the embedded CloudProfiles strictly: a field the type does
// not know is an error. Each call returns new objects.
func Read() ([]gardencorev1beta1.CloudProfile, error) {
	var profiles []gardencorev1beta1.CloudProfile
	if err := yaml.UnmarshalStrict(manifests, &profiles); err != nil {
		return nil, fmt.Errorf("parse cloud profiles: %w", err)
	}
	return profiles, nil
}
