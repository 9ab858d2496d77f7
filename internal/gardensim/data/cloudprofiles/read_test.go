package cloudprofiles

import "testing"

func TestReadParsesEveryProvider(t *testing.T) {
	profiles, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"aws": "aws", "az": "azure", "gcp": "gcp", "converged-cloud-kyma": "openstack", "alicloud": "alicloud"}
	if len(profiles) != len(want) {
		t.Fatalf("read %d profiles, want %d", len(profiles), len(want))
	}
	for _, p := range profiles {
		if want[p.Name] != p.Spec.Type {
			t.Errorf("profile %q has type %q, want %q", p.Name, p.Spec.Type, want[p.Name])
		}
		if len(p.Spec.Kubernetes.Versions) == 0 || len(p.Spec.MachineImages) == 0 || len(p.Spec.Regions) == 0 {
			t.Errorf("profile %q lacks versions, images or regions", p.Name)
		}
	}
}
