package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener/provider"
)

var update = flag.Bool("update", false, "rewrite the golden configs in testdata/")

// Existing configs as upstream (or Gardener users after it) left them on running shoots.
const (
	// awsOneZone is a one-zone aws shoot whose infrastructure owns a VPC endpoint, an elastic
	// IP, ignored tags, ECR access and a field this package's aws types do not know.
	awsOneZone = `{"kind":"InfrastructureConfig","apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1",` +
		`"enableECRAccess":true,"dualStack":{"enabled":true},` +
		`"networks":{"vpc":{"cidr":"10.250.0.0/16","gatewayEndpoints":["s3"],"futureVPCOption":"kept"},` +
		`"zones":[{"name":"eu-central-1a","internal":"10.250.48.0/20","public":"10.250.32.0/20","workers":"10.250.0.0/19","elasticIPAllocationID":"eipalloc-0abc"}]},` +
		`"ignoreTags":{"keys":["team"],"keyPrefixes":["kubernetes.io/"]}}`
	// awsTwoZonesAC is an aws shoot made with zones a and c, in that order.
	awsTwoZonesAC = `{"kind":"InfrastructureConfig","apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"vpc":{"id":"vpc-0123456789"},"zones":[` +
		`{"name":"eu-central-1a","internal":"10.250.48.0/20","public":"10.250.32.0/20","workers":"10.250.0.0/19"},` +
		`{"name":"eu-central-1c","internal":"10.250.112.0/20","public":"10.250.96.0/20","workers":"10.250.64.0/19"}]}}`
	// awsThreeZones is upstream's three-zone aws layout of 10.250.0.0/16.
	awsThreeZones = `{"kind":"InfrastructureConfig","apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[` +
		`{"name":"eu-central-1a","internal":"10.250.48.0/20","public":"10.250.32.0/20","workers":"10.250.0.0/19"},` +
		`{"name":"eu-central-1b","internal":"10.250.112.0/20","public":"10.250.96.0/20","workers":"10.250.64.0/19"},` +
		`{"name":"eu-central-1c","internal":"10.250.176.0/20","public":"10.250.160.0/20","workers":"10.250.128.0/19"}]}}`
	// awsControlPlane is an aws controlPlaneConfig with a setting a user added.
	awsControlPlane = `{"kind":"ControlPlaneConfig","apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","loadBalancerController":{"enabled":true}}`
	// azureOneZone is a zoned azure shoot in an existing VNet, with a managed identity and a
	// NAT gateway with its own public IP and a service endpoint on its zone.
	azureOneZone = `{"kind":"InfrastructureConfig","apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"vnet":{"name":"shared-vnet","resourceGroup":"network-rg"},"zones":[{"name":1,"cidr":"10.250.0.0/25",` +
		`"serviceEndpoints":["Microsoft.Storage"],"natGateway":{"enabled":true,"idleConnectionTimeoutMinutes":10,` +
		`"ipAddresses":[{"name":"egress-ip","resourceGroup":"network-rg"}]}}]},` +
		`"identity":{"name":"shoot-identity","resourceGroup":"identity-rg","acrAccess":true},"zoned":true}`
	// azureLite is an old non-zoned Azure lite shoot: one subnet for every worker.
	azureLite = `{"kind":"InfrastructureConfig","apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"vnet":{"cidr":"10.250.0.0/19"},"workers":"10.250.0.0/19"},"zoned":false}`
	// alicloudOneZone is a one-zone alicloud shoot whose NAT gateway has a fixed EIP.
	alicloudOneZone = `{"kind":"InfrastructureConfig","apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"vpc":{"id":"vpc-2zeabc","cidr":"10.250.0.0/16"},"zones":[{"name":"eu-central-1a","worker":"","workers":"10.250.0.0/19",` +
		`"natGateway":{"eipAllocationID":"eip-2zedef"}}]}}`
	// gcpInfrastructure is a gcp infrastructureConfig with a Cloud NAT setting a user added.
	gcpInfrastructure = `{"kind":"InfrastructureConfig","apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"worker":"10.250.0.0/22","workers":"10.250.0.0/22","cloudNAT":{"minPortsPerVM":4096}}}`
	// gcpControlPlane is a gcp controlPlaneConfig in zone a.
	gcpControlPlane = `{"kind":"ControlPlaneConfig","apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","zone":"europe-west3-a"}`
	// openstackInfrastructure is an openstack infrastructureConfig on another floating pool.
	openstackInfrastructure = `{"kind":"InfrastructureConfig","apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1",` +
		`"floatingPoolName":"FloatingIP-external-kyma-02","networks":{"worker":"","workers":"10.250.0.0/22"}}`
)

// TestBuildGolden generates configs and compares them with the reviewed configs in
// testdata/. Regenerate with: go test ./internal/gardener/provider -run Golden -update.
func TestBuildGolden(t *testing.T) {
	cases := []struct {
		name     string           // golden file name, testdata/<name>.json
		in       provider.Input   // what the Runtime asks for
		existing provider.Configs // the shoot's current configs
	}{
		{
			name: "aws-new-three-zones",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}},
		},
		{
			name: "aws-new-eight-zones",
			in: provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{
				"eu-central-1a", "eu-central-1b", "eu-central-1c", "eu-central-1d",
				"eu-central-1e", "eu-central-1f", "eu-central-1g", "eu-central-1h",
			}},
		},
		{
			name: "aws-new-small-nodes",
			in:   provider.Input{Type: "aws", Nodes: "10.180.0.0/23", Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}},
		},
		{
			name: "aws-new-dual-stack-existing-vpc",
			in: provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a"},
				DualStack: true, VPCNetwork: "vpc-0123456789abcdef0"},
		},
		{
			name: "azure-new-zoned",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/22", Zones: []string{"1", "2", "3"}},
		},
		{
			name: "azure-new-single-zone",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/22", Zones: []string{"2"}},
		},
		{
			name: "azure-new-lite",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/22", DualStack: true},
		},
		{
			name: "azure-new-existing-vnet",
			in: provider.Input{Type: "azure", Nodes: "10.250.0.0/16", Zones: []string{"3", "1"},
				VPCNetwork: "/subscriptions/0000/resourceGroups/network-rg/providers/Microsoft.Network/virtualNetworks/shared-vnet"},
		},
		{
			name: "gcp-new",
			in:   provider.Input{Type: "gcp", Nodes: "10.250.0.0/22", Zones: []string{"europe-west3-b", "europe-west3-a"}, DualStack: true},
		},
		{
			name: "gcp-new-existing-vpc",
			in:   provider.Input{Type: "gcp", Nodes: "10.250.0.0/22", Zones: []string{"europe-west3-a"}, VPCNetwork: "shared-vpc/shared-router"},
		},
		{
			name: "openstack-new",
			in:   provider.Input{Type: "openstack", Nodes: "10.250.0.0/22", Zones: []string{"eu-de-1a", "eu-de-1b"}},
		},
		{
			name: "openstack-new-existing-network",
			in:   provider.Input{Type: "openstack", Nodes: "10.250.0.0/22", VPCNetwork: "8c3b7f3e-2b8e-4a5c-9d7e-0f1a2b3c4d5e"},
		},
		{
			name: "alicloud-new",
			in:   provider.Input{Type: "alicloud", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}},
		},
		{
			name: "alicloud-new-existing-vpc",
			in:   provider.Input{Type: "alicloud", Nodes: "10.250.0.0/22", Zones: []string{"eu-central-1a"}, VPCNetwork: "vpc-2zeabc"},
		},
		{
			name:     "aws-add-zones",
			in:       provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1b", "eu-central-1a", "eu-central-1c"}},
			existing: configs(awsOneZone, awsControlPlane),
		},
		{
			name:     "aws-add-zone-between",
			in:       provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}},
			existing: configs(awsTwoZonesAC, awsControlPlane),
		},
		{
			name:     "aws-add-fourth-zone",
			in:       provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1d", "eu-central-1a"}},
			existing: configs(awsThreeZones, ""),
		},
		{
			name:     "azure-add-zones",
			in:       provider.Input{Type: "azure", Nodes: "10.250.0.0/22", Zones: []string{"1", "2", "3"}},
			existing: configs(azureOneZone, ""),
		},
		{
			name:     "alicloud-add-zone",
			in:       provider.Input{Type: "alicloud", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a", "eu-central-1b"}},
			existing: configs(alicloudOneZone, ""),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := provider.Build(tc.in, tc.existing)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			expectEncoded(t, got)
			again, err := provider.Build(tc.in, tc.existing)
			if err != nil {
				t.Fatalf("Build again: %v", err)
			}
			if !bytes.Equal(got.Infrastructure.Raw, again.Infrastructure.Raw) || !bytes.Equal(got.ControlPlane.Raw, again.ControlPlane.Raw) {
				t.Errorf("two builds of the same input differ")
			}
			if tc.existing.Infrastructure != nil {
				expectKept(t, tc.existing.Infrastructure.Raw, got.Infrastructure.Raw)
			}
			if tc.existing.ControlPlane != nil && got.ControlPlane != tc.existing.ControlPlane {
				t.Errorf("controlPlaneConfig replaced, want the existing one")
			}
			compareGolden(t, filepath.Join("testdata", tc.name+".json"), render(t, got))
		})
	}
}

// TestBuildKeepsExisting checks that configs come back untouched (same pointers, same bytes)
// when the Runtime brings no zone the infrastructureConfig lacks.
func TestBuildKeepsExisting(t *testing.T) {
	cases := []struct {
		name     string           // what the shoot and Runtime look like
		in       provider.Input   // what the Runtime asks for
		existing provider.Configs // the shoot's current configs
	}{
		{
			name:     "aws same zones",
			in:       provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1c", "eu-central-1a", "eu-central-1b"}},
			existing: configs(awsThreeZones, awsControlPlane),
		},
		{
			name:     "aws fewer zones: none is removed",
			in:       provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1b"}},
			existing: configs(awsThreeZones, awsControlPlane),
		},
		{
			name: "aws indented config and other nodes: nothing is decoded again",
			in:   provider.Input{Type: "aws", Nodes: "not a CIDR", Zones: []string{"eu-central-1a"}},
			existing: configs("{\n  \"apiVersion\": \"aws.provider.extensions.gardener.cloud/v1alpha1\",\n  \"kind\": \"InfrastructureConfig\",\n"+
				"  \"networks\": {\"zones\": [{\"name\": \"eu-central-1a\", \"workers\": \"10.250.0.0/19\"}]}\n}\n", awsControlPlane),
		},
		{
			name:     "azure lite with zones: one subnet for all",
			in:       provider.Input{Type: "azure", Nodes: "10.250.0.0/19", Zones: []string{"1", "2"}},
			existing: configs(azureLite, `{"kind":"ControlPlaneConfig","apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1"}`),
		},
		{
			name: "azure zoned with the older single subnet",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/19", Zones: []string{"1", "2", "3"}},
			existing: configs(`{"kind":"InfrastructureConfig","apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1",`+
				`"networks":{"vnet":{"cidr":"10.250.0.0/19"},"workers":"10.250.0.0/19","natGateway":{"enabled":true,"idleConnectionTimeoutMinutes":4}},"zoned":true}`, ""),
		},
		{
			name:     "azure zone written with a leading zero",
			in:       provider.Input{Type: "azure", Nodes: "10.250.0.0/22", Zones: []string{"01"}},
			existing: configs(azureOneZone, `{"kind":"ControlPlaneConfig","apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1"}`),
		},
		{
			name:     "gcp other zones: the control plane stays in its zone",
			in:       provider.Input{Type: "gcp", Nodes: "10.250.0.0/22", Zones: []string{"europe-west3-c"}},
			existing: configs(gcpInfrastructure, gcpControlPlane),
		},
		{
			name:     "openstack",
			in:       provider.Input{Type: "openstack", Nodes: "10.250.0.0/22", Zones: []string{"eu-de-1a"}},
			existing: configs(openstackInfrastructure, `{"kind":"ControlPlaneConfig","apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","loadBalancerProvider":"octavia"}`),
		},
		{
			name:     "alicloud same zone",
			in:       provider.Input{Type: "alicloud", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a"}},
			existing: configs(alicloudOneZone, `{"kind":"ControlPlaneConfig","apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1"}`),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			infra := append([]byte(nil), tc.existing.Infrastructure.Raw...)
			got, err := provider.Build(tc.in, tc.existing)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got.Infrastructure != tc.existing.Infrastructure || !bytes.Equal(got.Infrastructure.Raw, infra) {
				t.Errorf("infrastructureConfig changed:\n--- want\n%s\n--- got\n%s", infra, got.Infrastructure.Raw)
			}
			if tc.existing.ControlPlane == nil {
				expectEncoded(t, got)
				return
			}
			if got.ControlPlane != tc.existing.ControlPlane {
				t.Errorf("controlPlaneConfig changed:\n--- want\n%s\n--- got\n%s", tc.existing.ControlPlane.Raw, got.ControlPlane.Raw)
			}
		})
	}
}

// TestBuildMissingControlPlane checks that an existing shoot without a controlPlaneConfig
// gets a new one and keeps its infrastructureConfig.
func TestBuildMissingControlPlane(t *testing.T) {
	existing := configs(gcpInfrastructure, "")
	got, err := provider.Build(provider.Input{Type: "gcp", Nodes: "10.250.0.0/22", Zones: []string{"europe-west3-b"}}, existing)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if got.Infrastructure != existing.Infrastructure {
		t.Errorf("infrastructureConfig replaced, want the existing one")
	}
	want := `{"kind":"ControlPlaneConfig","apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","zone":"europe-west3-b"}`
	if string(got.ControlPlane.Raw) != want {
		t.Errorf("controlPlaneConfig %s, want %s", got.ControlPlane.Raw, want)
	}
}

// TestBuildErrors checks every error Build returns by its sentinel, and that its message names
// the field the user has to change.
func TestBuildErrors(t *testing.T) {
	cases := []struct {
		name     string           // the mistake
		in       provider.Input   // what the Runtime asks for
		existing provider.Configs // the shoot's current configs
		want     error            // the sentinel
		mention  string           // what the message names
	}{
		{
			name: "unknown provider type",
			in:   provider.Input{Type: "gdch", Nodes: "10.250.0.0/16", Zones: []string{"a"}},
			want: provider.ErrUnsupportedProvider, mention: `"gdch"`,
		},
		{
			name: "nodes without a prefix",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0", Zones: []string{"eu-central-1a"}},
			want: provider.ErrInvalidNodes, mention: "spec.shoot.networking.nodes",
		},
		{
			name: "nodes IPv6",
			in:   provider.Input{Type: "gcp", Nodes: "fd00::/64", Zones: []string{"europe-west3-a"}},
			want: provider.ErrInvalidNodes, mention: "spec.shoot.networking.nodes",
		},
		{
			name: "nodes with host bits",
			in:   provider.Input{Type: "openstack", Nodes: "10.250.0.1/16"},
			want: provider.ErrInvalidNodes, mention: "the network is 10.250.0.0/16",
		},
		{
			name: "nodes larger than an aws VPC",
			in:   provider.Input{Type: "aws", Nodes: "10.0.0.0/15", Zones: []string{"eu-central-1a"}},
			want: provider.ErrInvalidNodes, mention: "/16 or longer",
		},
		{
			name: "aws nodes too small for three zones",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0/25", Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}},
			want: provider.ErrNodesTooSmall, mention: "spec.shoot.networking.nodes 10.250.0.0/25 is too small for 3 aws zones: it needs a prefix of /24 or shorter",
		},
		{
			name: "aws nodes too small for four zones",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0/23", Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c", "eu-central-1d"}},
			want: provider.ErrNodesTooSmall, mention: "it needs a prefix of /22 or shorter",
		},
		{
			name: "azure nodes too small",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/25", Zones: []string{"1"}},
			want: provider.ErrNodesTooSmall, mention: "/24 or shorter",
		},
		{
			name: "azure lite nodes too small",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/26"},
			want: provider.ErrNodesTooSmall, mention: "spec.shoot.networking.nodes",
		},
		{
			name: "alicloud nodes too small",
			in:   provider.Input{Type: "alicloud", Nodes: "10.250.0.0/25", Zones: []string{"eu-central-1a"}},
			want: provider.ErrNodesTooSmall, mention: "/24 or shorter",
		},
		{
			name: "aws without zones",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0/16"},
			want: provider.ErrNoZones, mention: "aws needs at least one worker zone",
		},
		{
			name: "alicloud without zones",
			in:   provider.Input{Type: "alicloud", Nodes: "10.250.0.0/16"},
			want: provider.ErrNoZones, mention: "alicloud",
		},
		{
			name: "gcp without zones has no control plane zone",
			in:   provider.Input{Type: "gcp", Nodes: "10.250.0.0/16"},
			want: provider.ErrNoZones, mention: "gcp",
		},
		{
			name: "aws nine zones",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
			want: provider.ErrTooManyZones, mention: "at most 8",
		},
		{
			name: "azure zone that is not a number",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/16", Zones: []string{"westeurope-1"}},
			want: provider.ErrInvalidZone, mention: `"westeurope-1"`,
		},
		{
			name: "aws empty zone name",
			in:   provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{""}},
			want: provider.ErrInvalidZone, mention: "empty",
		},
		{
			name: "azure VNet without its resource group",
			in:   provider.Input{Type: "azure", Nodes: "10.250.0.0/16", Zones: []string{"1"}, VPCNetwork: "shared-vnet"},
			want: provider.ErrInvalidVPCNetwork, mention: "spec.shoot.networking.vpcNetwork",
		},
		{
			name: "gcp VPC without its Cloud Router",
			in:   provider.Input{Type: "gcp", Nodes: "10.250.0.0/16", Zones: []string{"europe-west3-a"}, VPCNetwork: "shared-vpc"},
			want: provider.ErrInvalidVPCNetwork, mention: "<vpcName>/<cloudRouterName>",
		},
		{
			name:     "existing config not JSON",
			in:       provider.Input{Type: "aws", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a"}},
			existing: configs("networks: {}", ""),
			want:     provider.ErrMalformedExisting, mention: "aws spec.provider.infrastructureConfig",
		},
		{
			name:     "existing config null",
			in:       provider.Input{Type: "gcp", Nodes: "10.250.0.0/16", Zones: []string{"europe-west3-a"}},
			existing: configs("null", ""),
			want:     provider.ErrMalformedExisting, mention: "gcp spec.provider.infrastructureConfig",
		},
		{
			name:     "existing azure zone names are strings",
			in:       provider.Input{Type: "azure", Nodes: "10.250.0.0/22", Zones: []string{"1"}},
			existing: configs(`{"networks":{"zones":[{"name":"1","cidr":"10.250.0.0/25"}]}}`, ""),
			want:     provider.ErrMalformedExisting, mention: "azure spec.provider.infrastructureConfig",
		},
		{
			name:     "existing zone subnet not a CIDR when a zone is added",
			in:       provider.Input{Type: "alicloud", Nodes: "10.250.0.0/16", Zones: []string{"eu-central-1a", "eu-central-1b"}},
			existing: configs(`{"networks":{"zones":[{"name":"eu-central-1a","workers":"10.250.0.0"}]}}`, ""),
			want:     provider.ErrMalformedExisting, mention: `"10.250.0.0"`,
		},
		{
			name:     "zone added to a node network with no room for it",
			in:       provider.Input{Type: "aws", Nodes: "10.180.0.0/23", Zones: []string{"eu-central-1d"}},
			existing: configs(`{"networks":{"zones":[{"name":"eu-central-1a","workers":"10.180.0.0/26","public":"10.180.0.64/27","internal":"10.180.0.96/27"},{"name":"eu-central-1b","workers":"10.180.0.128/26","public":"10.180.0.192/27","internal":"10.180.0.224/27"},{"name":"eu-central-1c","workers":"10.180.1.0/26","public":"10.180.1.64/27","internal":"10.180.1.96/27"}]}}`, ""),
			want:     provider.ErrNodesTooSmall, mention: "/22 or shorter",
		},
		{
			name:     "zone added to an azure shoot with eight zones",
			in:       provider.Input{Type: "azure", Nodes: "10.250.0.0/16", Zones: []string{"9"}},
			existing: configs(eightAzureZones(), ""),
			want:     provider.ErrTooManyZones, mention: "got 9",
		},
		{
			name:     "zone added with invalid nodes",
			in:       provider.Input{Type: "azure", Nodes: "10.250.0.0/33", Zones: []string{"1", "2"}},
			existing: configs(azureOneZone, ""),
			want:     provider.ErrInvalidNodes, mention: "spec.shoot.networking.nodes",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := provider.Build(tc.in, tc.existing)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Build error %v, want %v (configs %+v)", err, tc.want, got)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %q", err, tc.mention)
			}
		})
	}
}

// eightAzureZones is a zoned azure config of 10.250.0.0/16 with zones 1 to 8.
func eightAzureZones() string {
	var zones []string
	for i, cidr := range []string{"0", "32", "64", "96", "128", "160", "192", "224"} {
		zones = append(zones, `{"name":`+string(rune('1'+i))+`,"cidr":"10.250.`+cidr+`.0/19"}`)
	}
	return `{"kind":"InfrastructureConfig","apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1",` +
		`"networks":{"vnet":{"cidr":"10.250.0.0/16"},"zones":[` + strings.Join(zones, ",") + `]},"zoned":true}`
}

func configs(infra, controlPlane string) provider.Configs {
	return provider.Configs{Infrastructure: raw(infra), ControlPlane: raw(controlPlane)}
}

func raw(s string) *runtime.RawExtension {
	if s == "" {
		return nil
	}
	return rawJSON(s)
}

func rawJSON(s string) *runtime.RawExtension {
	return &runtime.RawExtension{Raw: []byte(s)}
}

// expectEncoded checks that both configs are compact JSON objects with apiVersion and kind.
func expectEncoded(t *testing.T, c provider.Configs) {
	t.Helper()
	for name, r := range map[string]*runtime.RawExtension{"infrastructureConfig": c.Infrastructure, "controlPlaneConfig": c.ControlPlane} {
		if r == nil {
			t.Fatalf("%s is nil", name)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, r.Raw); err != nil || !bytes.Equal(compact.Bytes(), r.Raw) {
			t.Errorf("%s is not compact JSON (%v): %s", name, err, r.Raw)
		}
		var meta struct{ APIVersion, Kind string }
		if err := json.Unmarshal(r.Raw, &meta); err != nil || meta.APIVersion == "" || meta.Kind == "" {
			t.Errorf("%s lacks apiVersion or kind (%v): %s", name, err, r.Raw)
		}
	}
}

// expectKept checks that got holds every zone of existing first and unchanged, and that
// everything besides networks.zones is as it was.
func expectKept(t *testing.T, existing, got []byte) {
	t.Helper()
	before, after := generic(t, existing), generic(t, got)
	zonesBefore, zonesAfter := takeZones(before), takeZones(after)
	if len(zonesAfter) < len(zonesBefore) || !reflect.DeepEqual(zonesAfter[:len(zonesBefore)], zonesBefore) {
		t.Errorf("existing zones not kept first and unchanged:\n--- existing\n%v\n--- got\n%v", zonesBefore, zonesAfter)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("fields besides networks.zones changed:\n--- existing\n%v\n--- got\n%v", before, after)
	}
}

func generic(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

// takeZones removes networks.zones from m and returns it.
func takeZones(m map[string]any) []any {
	networks, _ := m["networks"].(map[string]any)
	zones, _ := networks["zones"].([]any)
	delete(networks, "zones")
	return zones
}

// render shows both configs indented, in the order their keys were encoded.
func render(t *testing.T, c provider.Configs) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("{\n  \"infrastructureConfig\": ")
	if err := json.Indent(&b, c.Infrastructure.Raw, "  ", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteString(",\n  \"controlPlaneConfig\": ")
	if err := json.Indent(&b, c.ControlPlane.Raw, "  ", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n}\n")
	return b.String()
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("configs differ from %s (review, then regenerate with -update):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
