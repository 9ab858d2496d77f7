package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// alicloudAPIVersion is the API version of alicloud's provider configs.
const alicloudAPIVersion = "alicloud.provider.extensions.gardener.cloud/v1alpha1"

// alicloudReservedCIDR is reserved by Alicloud for its own services.
const alicloudReservedCIDR = "100.64.0.0/10"

// alicloudInfra holds the part of alicloud's InfrastructureConfig the
// simulator checks; the extension's API module is not available to it. The
// untagged fields render in errors as the extension's internal types do.
type alicloudInfra struct {
	metav1.TypeMeta `json:",inline"`
	Networks        alicloudNetworks `json:"networks"`
	DualStack       *struct {
		Enabled bool `json:"enabled"`
	} `json:"dualStack,omitempty"`
}

type alicloudNetworks struct {
	VPC   alicloudVPC    `json:"vpc"`
	Zones []alicloudZone `json:"zones"`
}

type alicloudVPC struct {
	ID                        *string `json:"id,omitempty"`
	CIDR                      *string `json:"cidr,omitempty"`
	GardenerManagedNATGateway *bool   `json:"gardenerManagedNATGateway,omitempty"`
	UseCustomRouteTable       *bool   `json:"useCustomRouteTable,omitempty"`
}

type alicloudZone struct {
	Name          string          `json:"name"`
	Worker        string          `json:"worker,omitempty"`
	Workers       string          `json:"workers,omitempty"`
	NatGateway    json.RawMessage `json:"natGateway,omitempty"`
	Ipv6CidrBlock *int            `json:"ipv6CidrBlock,omitempty"`
}

// validateAlicloud mirrors the shoot validator of
// gardener-extension-provider-alicloud and pkg/apis/alicloud/validation:
// zone networks (networks.zones[].workers) inside the nodes network and the
// VPC and disjoint, worker zones configured in the infrastructureConfig, the
// VPC and the zones' networks immutable, the shoot's networks too.
func validateAlicloud(c *check) error {
	infra, err := decodeAlicloudInfra(c.shoot.Spec.Provider.InfrastructureConfig, true)
	if err != nil {
		return err
	}
	if cp := c.shoot.Spec.Provider.ControlPlaneConfig; cp != nil {
		if err := decodeAlicloudKind(cp, "ControlPlaneConfig", false); err != nil {
			return field.Invalid(cpConfigPath, string(cp.Raw), "isn't a supported version")
		}
	}
	if c.op == Update {
		if err := validateAlicloudUpdate(c, infra); err != nil {
			return err
		}
	}
	if errs := validateAlicloudNetworking(c.shoot.Spec.Networking); len(errs) > 0 {
		return aggregate(errs)
	}
	var nodes, pods, services *string
	if n := c.shoot.Spec.Networking; n != nil {
		nodes, pods, services = n.Nodes, n.Pods, n.Services
	}
	if errs := validateAlicloudInfra(infra, nodes, pods, services); len(errs) > 0 {
		return aggregate(errs)
	}
	return aggregate(validateAlicloudWorkers(c, infra))
}

// validateAlicloudUpdate: the infrastructureConfig, the pools' zones and
// the shoot's networks against the stored shoot, each check refusing on its
// own.
func validateAlicloudUpdate(c *check, infra *alicloudInfra) error {
	old, err := decodeAlicloudInfra(c.old.Spec.Provider.InfrastructureConfig, false)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(old, infra) {
		if errs := validateAlicloudInfraUpdate(old, infra); len(errs) > 0 {
			return aggregate(errs)
		}
	}
	if errs := validateWorkersZonesUpdate(c.shoot.Spec.Provider.Workers, c.old.Spec.Provider.Workers, workersPath); len(errs) > 0 {
		return aggregate(errs)
	}
	if errs := validateAlicloudNetworkingUpdate(c.old.Spec.Networking, c.shoot.Spec.Networking); len(errs) > 0 {
		return aggregate(errs)
	}
	return nil
}

// validateAlicloudWorkers: each pool's volume, and its zones configured in
// the infrastructureConfig.
func validateAlicloudWorkers(c *check, infra *alicloudInfra) field.ErrorList {
	var zones []string
	for _, z := range infra.Networks.Zones {
		zones = append(zones, z.Name)
	}
	var errs field.ErrorList
	for i, w := range c.shoot.Spec.Provider.Workers {
		errs = append(errs, validateWorkerZones(w, zones, workersPath.Index(i), alicloudVolume)...)
	}
	return errs
}

// alicloudVolume wants a volume's type and size, in this order.
func alicloudVolume(v *gardencore.Volume, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v.Type == nil {
		errs = append(errs, field.Required(p.Child("type"), "must not be empty"))
	}
	if v.VolumeSize == "" {
		errs = append(errs, field.Required(p.Child("size"), "must not be empty"))
	}
	return errs
}

// decodeAlicloudInfra decodes strictly (new objects) or leniently.
func decodeAlicloudInfra(raw *runtime.RawExtension, strict bool) (*alicloudInfra, error) {
	if raw == nil {
		return nil, field.Required(infraConfigPath, "InfrastructureConfig must be set for Alicloud shoots")
	}
	infra := &alicloudInfra{}
	if err := decodeAlicloud(raw, infra, "InfrastructureConfig", strict); err != nil {
		return nil, field.Forbidden(infraConfigPath, "not allowed to configure an unsupported infrastructureConfig")
	}
	return infra, nil
}

func decodeAlicloudKind(raw *runtime.RawExtension, kind string, strict bool) error {
	return decodeAlicloud(raw, &metav1.TypeMeta{}, kind, strict)
}

// decodeAlicloud decodes raw into into and wants alicloud's API version
// and kind.
func decodeAlicloud(raw *runtime.RawExtension, into any, kind string, strict bool) error {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw.Raw, &tm); err != nil {
		return fmt.Errorf("decode alicloud %s: %w", kind, err)
	}
	if tm.APIVersion != alicloudAPIVersion || tm.Kind != kind {
		return fmt.Errorf("no kind %q is registered for version %q", tm.Kind, tm.APIVersion)
	}
	if _, isMeta := into.(*metav1.TypeMeta); isMeta || !strict {
		if err := json.Unmarshal(raw.Raw, into); err != nil {
			return fmt.Errorf("decode alicloud %s: %w", kind, err)
		}
		return nil
	}
	strictErrs, err := sigsjson.UnmarshalStrict(raw.Raw, into)
	if err != nil {
		return fmt.Errorf("decode alicloud %s: %w", kind, err)
	}
	if len(strictErrs) > 0 {
		return fmt.Errorf("strict decoding error: %w", errors.Join(strictErrs...))
	}
	return nil
}

// validateAlicloudNetworking mirrors ValidateNetworking.
func validateAlicloudNetworking(n *gardencore.Networking) field.ErrorList {
	var errs field.ErrorList
	var nodes, pods, services *string
	if n != nil {
		nodes, pods, services = n.Nodes, n.Pods, n.Services
	}
	if nodes == nil {
		errs = append(errs, field.Required(networkingPath.Child("nodes"), "a CIDR must be provided"))
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"nodes", nodes}, {"pods", pods}, {"services", services}} {
		if f.value != nil && intersects(*f.value, alicloudReservedCIDR) {
			p := networkingPath.Child(f.name)
			errs = append(errs, field.Invalid(p, p, fmt.Sprintf("must not overlap with %s, it is reserved by Alicloud", alicloudReservedCIDR)))
		}
	}
	return errs
}

// validateAlicloudNetworkingUpdate: parsable node, pod and service
// networks are immutable.
func validateAlicloudNetworkingUpdate(old, n *gardencore.Networking) field.ErrorList {
	if old == nil || n == nil {
		return nil
	}
	var errs field.ErrorList
	for _, f := range []struct {
		name     string
		old, new *string
	}{{"nodes", old.Nodes, n.Nodes}, {"pods", old.Pods, n.Pods}, {"services", old.Services, n.Services}} {
		if f.old == nil {
			continue
		}
		if _, _, err := net.ParseCIDR(*f.old); err == nil {
			errs = append(errs, apivalidation.ValidateImmutableField(f.new, f.old, networkingPath.Child(f.name))...)
		}
	}
	return errs
}

// validateAlicloudInfra mirrors ValidateInfrastructureConfig (relative
// paths, as the extension's).
func validateAlicloudInfra(infra *alicloudInfra, nodesCIDR, podsCIDR, servicesCIDR *string) field.ErrorList {
	var errs field.ErrorList
	nodes := optionalCIDR(nodesCIDR, field.NewPath("networking", "nodes"))
	pods := optionalCIDR(podsCIDR, field.NewPath("networking", "pods"))
	services := optionalCIDR(servicesCIDR, field.NewPath("networking", "services"))
	networks := field.NewPath("networks")
	if len(infra.Networks.Zones) == 0 {
		errs = append(errs, field.Required(networks.Child("zones"), "must specify at least the network for one zone"))
	}
	var cidrs []*cidr
	for i, z := range infra.Networks.Zones {
		zp := networks.Child("zones").Index(i)
		for _, w := range []struct{ name, value string }{{"worker", z.Worker}, {"workers", z.Workers}} {
			if w.value == "" {
				continue
			}
			cidrs = append(cidrs, newCIDR(w.value, zp.Child(w.name)))
			errs = append(errs, canonical(zp.Child(w.name), w.value)...)
		}
	}
	errs = append(errs, parse(cidrs...)...)
	errs = append(errs, nodes.subset(cidrs...)...)
	vpc := infra.Networks.VPC
	if (vpc.ID == nil) == (vpc.CIDR == nil) {
		errs = append(errs, field.Invalid(networks.Child("vpc"), vpc, "must specify either a vpc id or a cidr"))
	} else if vpc.CIDR != nil {
		p := networks.Child("vpc", "cidr")
		v := newCIDR(*vpc.CIDR, p)
		errs = append(errs, canonical(p, *vpc.CIDR)...)
		errs = append(errs, parse(v)...)
		errs = append(errs, v.subset(nodes)...)
		errs = append(errs, v.subset(cidrs...)...)
		errs = append(errs, v.notOverlap(pods, services)...)
	}
	errs = append(errs, disjoint(cidrs)...)
	errs = append(errs, pods.notOverlap(cidrs...)...)
	return append(errs, services.notOverlap(cidrs...)...)
}

// validateAlicloudInfraUpdate mirrors ValidateInfrastructureConfigUpdate.
func validateAlicloudInfraUpdate(old, infra *alicloudInfra) field.ErrorList {
	var errs field.ErrorList
	vpcPath := field.NewPath("networks").Child("vpc")
	ov, nv := old.Networks.VPC, infra.Networks.VPC
	ov.UseCustomRouteTable, nv.UseCustomRouteTable = nil, nil
	errs = append(errs, apivalidation.ValidateImmutableField(nv, ov, vpcPath)...)
	if boolValue(old.Networks.VPC.UseCustomRouteTable) != boolValue(infra.Networks.VPC.UseCustomRouteTable) {
		errs = append(errs, field.Forbidden(vpcPath.Child("useCustomRouteTable"), "useCustomRouteTable is immutable once set"))
	}
	zonesPath := field.NewPath("networks").Child("zones")
	if len(infra.Networks.Zones) < len(old.Networks.Zones) {
		return append(errs, field.Forbidden(zonesPath, "zones cannot be removed"))
	}
	for i, o := range old.Networks.Zones {
		z := infra.Networks.Zones[i]
		errs = append(errs, apivalidation.ValidateImmutableField(o.Name, z.Name, zonesPath.Index(i))...)
		if o.Worker != "" && o.Workers == "" && z.Worker == "" && z.Workers != "" {
			errs = append(errs, apivalidation.ValidateImmutableField(o.Worker, z.Workers, zonesPath.Index(i))...)
		} else {
			errs = append(errs, apivalidation.ValidateImmutableField(o.Workers, z.Workers, zonesPath.Index(i))...)
			errs = append(errs, apivalidation.ValidateImmutableField(o.Worker, z.Worker, zonesPath.Index(i))...)
		}
	}
	if old.DualStack != nil && old.DualStack.Enabled && (infra.DualStack == nil || !infra.DualStack.Enabled) {
		errs = append(errs, field.Forbidden(field.NewPath("dualStack"), "dualStack cannot be disabled once enabled"))
	}
	return errs
}

func boolValue(b *bool) bool { return b != nil && *b }

// intersects reports whether two networks overlap.
func intersects(a, b string) bool {
	_, na, errA := net.ParseCIDR(a)
	_, nb, errB := net.ParseCIDR(b)
	return errA == nil && errB == nil && (na.Contains(nb.IP) || nb.Contains(na.IP))
}
