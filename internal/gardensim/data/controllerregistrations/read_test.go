package controllerregistrations

import (
	"slices"
	"testing"
)

func TestReadRegistersProvidersAndExtensions(t *testing.T) {
	registrations, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{}
	for _, r := range registrations {
		if len(r.Spec.Resources) == 0 {
			t.Errorf("registration %q registers nothing", r.Name)
		}
		for _, res := range r.Spec.Resources {
			kinds[res.Kind] = append(kinds[res.Kind], res.Type)
		}
	}
	tests := []struct {
		kind string   // extension kind
		want []string // types that must be registered
	}{
		{"ControlPlane", []string{"aws", "azure", "gcp", "openstack", "alicloud"}},
		{"Worker", []string{"aws", "azure", "gcp", "openstack", "alicloud"}},
		{"Network", []string{"calico"}},
		{"OperatingSystemConfig", []string{"gardenlinux"}},
		{"ContainerRuntime", []string{"gvisor"}},
		{"DNSRecord", []string{"aws-route53", "azure-dns", "google-clouddns", "openstack-designate", "alicloud-dns"}},
		{"Extension", []string{"shoot-networking-filter", "shoot-oidc-service", "shoot-dns-service", "shoot-cert-service", "shoot-auditlog-service", "acl", "registry-cache", "shoot-nvidia-openshell"}},
	}
	for _, tc := range tests {
		for _, typ := range tc.want {
			if !slices.Contains(kinds[tc.kind], typ) {
				t.Errorf("%s %q is not registered", tc.kind, typ)
			}
		}
	}
	if got := ExtensionTypes(registrations); len(got) != 8 {
		t.Errorf("extension types = %v, want the 8 Infrastructure Manager writes", got)
	}
}
