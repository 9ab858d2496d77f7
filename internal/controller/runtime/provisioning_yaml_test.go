package runtime

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The provisioning info's YAML is the one sigs.k8s.io/yaml writes, as upstream writes it, byte
// for byte: a ConfigMap upstream wrote reads as unchanged, and none is rewritten for its
// spelling. The details carry strings that YAML would read as other types, and an
// infrastructure configuration of any JSON.
func TestDetailsYAMLIsSigsYAML(t *testing.T) {
	at := metav1.Date(2026, 12, 6, 10, 42, 21, 0, metav1.Now().UTC().Location())
	strs := []string{"", "true", "yes", "no", "off", "null", "~", "1", "0x1F", "1e3", "1.0", "-0", ".inf", "2026-12-06T10:42:21Z",
		"a: b", "- x", "#c", "multi\nline", " lead", "trail ", "quote'\"", "ünïcode", "tab\there", "@at", "*star", "&amp", "!bang", "%pct", "{x}", "[y]", "01234"}
	numbers := []string{"0", "-1", "3", "3.5", "1e3", "1E-3", "1.0", "-0", "9007199254740993", "9223372036854775807", "18446744073709551615",
		"18446744073709551616", "1e400", "123456789012345678901234567890", "0.1", "2.5e+21"}
	var cases []provisioningDetails
	for i, s := range strs {
		d := provisioningDetails{
			WorkerPools: workerPools{
				Kyma:   workerPool{Name: s, MachineType: "m6i.large", HAZones: i%2 == 0, AutoScalerMin: int32(i), AutoScalerMax: int32(-i)},
				Custom: []workerPool{{Name: "extra" + s, MachineType: s, AutoScalerMax: 3}},
			},
			GlobalAccountID: s, SubaccountID: "sub", RuntimeID: s, InstanceName: s, Region: "eu-central-1", SeedRegion: s,
			NetworkDetails: networkDetails{DualStackIPEnabled: i%3 == 0, KubeAPIServer: &kubeAPIServerDetails{ACL: []string{s, "10.0.0.0/8"}}},
		}
		if i%2 == 1 {
			d.LastReconcileTime = &at
		}
		cases = append(cases, d)
	}
	for _, n := range numbers {
		raw := fmt.Sprintf(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","n":%s,"list":[%s,"%s",{"k":%s},null,true,[]],"empty":{},"nested":{"b":{"a":[1,2.5,"x"]},"a":null,"10":"ten","9":"nine"}}`, n, n, n, n)
		cases = append(cases, provisioningDetails{InfrastructureConfig: &runtime.RawExtension{Raw: []byte(raw)}})
	}
	for i, d := range cases {
		want, err := yaml.Marshal(d)
		if err != nil {
			t.Fatalf("case %d: sigs.k8s.io/yaml: %v", i, err)
		}
		got, err := detailsYAML(d)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d: the YAML differs from sigs.k8s.io/yaml's\ngot:\n%s\nwant:\n%s", i, got, want)
		}
	}
}
