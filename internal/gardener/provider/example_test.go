package provider_test

import (
	"encoding/json"
	"fmt"

	awsv1alpha1 "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/v1alpha1"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener/provider"
)

// A new aws shoot gets upstream's layout: per zone a /19 for workers and /20s for public and
// internal subnets, in the order of the zones.
func ExampleBuild() {
	out, err := provider.Build(provider.Input{
		Type:  provider.TypeAWS,
		Nodes: "10.250.0.0/16",
		Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"},
	}, provider.Configs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var infra awsv1alpha1.InfrastructureConfig
	if err := json.Unmarshal(out.Infrastructure.Raw, &infra); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("vpc", *infra.Networks.VPC.CIDR)
	for _, z := range infra.Networks.Zones {
		fmt.Println(z.Name, "workers", z.Workers, "public", z.Public, "internal", z.Internal)
	}
	fmt.Println(string(out.ControlPlane.Raw))
	// Output:
	// vpc 10.250.0.0/16
	// eu-central-1a workers 10.250.0.0/19 public 10.250.32.0/20 internal 10.250.48.0/20
	// eu-central-1b workers 10.250.64.0/19 public 10.250.96.0/20 internal 10.250.112.0/20
	// eu-central-1c workers 10.250.128.0/19 public 10.250.160.0/20 internal 10.250.176.0/20
	// {"kind":"ControlPlaneConfig","apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1"}
}

// A zone added to a running shoot gets the next free subnets; the existing zones, and
// everything else the shoot's infrastructure owns, stay as they are.
func ExampleBuild_addZone() {
	existing := provider.Configs{Infrastructure: rawJSON(`{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1",` +
		`"kind":"InfrastructureConfig","networks":{"vpc":{"id":"vpc-2zeabc"},` +
		`"zones":[{"name":"eu-central-1a","workers":"10.250.0.0/19","natGateway":{"eipAllocationID":"eip-2zedef"}}]}}`)}
	out, err := provider.Build(provider.Input{
		Type:  provider.TypeAlicloud,
		Nodes: "10.250.0.0/16",
		Zones: []string{"eu-central-1b", "eu-central-1a"},
	}, existing)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out.Infrastructure.Raw))
	// Output:
	// {"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"id":"vpc-2zeabc"},"zones":[{"name":"eu-central-1a","workers":"10.250.0.0/19","natGateway":{"eipAllocationID":"eip-2zedef"}},{"name":"eu-central-1b","worker":"","workers":"10.250.32.0/19"}]}}
}
