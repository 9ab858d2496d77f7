package admission

import (
	"errors"
	"reflect"
	"slices"
	"strconv"

	apisazure "github.com/gardener/gardener-extension-provider-azure/pkg/apis/azure"
	gardencore "github.com/gardener/gardener/pkg/apis/core"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateAzure mirrors the shoot validator of
// gardener-extension-provider-azure and pkg/apis/azure/validation: zonal
// networks (networks.zones[].cidr) or one workers network inside the nodes
// network and the VNet, worker zones configured in the infrastructureConfig,
// zone networks immutable, the VNet only growing.
func validateAzure(c *check) error {
	raw := c.shoot.Spec.Provider.InfrastructureConfig
	if c.op == Create {
		infra, err := decodeAzureInfra(strictDecoder, raw)
		if err != nil {
			return err
		}
		if err := decodeAzureControlPlane(c); err != nil {
			return err
		}
		return aggregate(validateAzureShoot(c, nil, infra))
	}
	if raw == nil {
		return field.Required(infraConfigPath, "InfrastructureConfig must be set for Azure shoots")
	}
	infra, err := decodeAzureInfra(strictDecoder, raw)
	if err != nil {
		return err
	}
	if c.old.Spec.Provider.InfrastructureConfig == nil {
		return field.InternalError(infraConfigPath, errors.New("InfrastructureConfig is not available on old shoot"))
	}
	old, err := decodeAzureInfra(lenientDecoder, c.old.Spec.Provider.InfrastructureConfig)
	if err != nil {
		return err
	}
	if err := decodeAzureControlPlane(c); err != nil {
		return err
	}
	var errs field.ErrorList
	if !reflect.DeepEqual(old, infra) {
		errs = append(errs, validateAzureInfraUpdate(old, infra, infraConfigPath)...)
	}
	errs = append(errs, validateWorkersZonesUpdate(c.shoot.Spec.Provider.Workers, c.old.Spec.Provider.Workers, workersPath)...)
	errs = append(errs, validateAzureShoot(c, old, infra)...)
	return aggregate(errs)
}

func decodeAzureInfra(d runtime.Decoder, raw *runtime.RawExtension) (*apisazure.InfrastructureConfig, error) {
	if raw == nil {
		return nil, field.Required(infraConfigPath, "InfrastructureConfig must be set for Azure shoots")
	}
	infra := &apisazure.InfrastructureConfig{}
	if err := decodeErrorText(d, raw, infra); err != nil {
		return nil, field.Forbidden(infraConfigPath, "not allowed to configure an unsupported infrastructureConfig")
	}
	return infra, nil
}

// decodeAzureControlPlane returns the decoder's own error, as the
// extension does.
func decodeAzureControlPlane(c *check) error {
	if cp := c.shoot.Spec.Provider.ControlPlaneConfig; cp != nil {
		return decodeErrorText(strictDecoder, cp, &apisazure.ControlPlaneConfig{})
	}
	return nil
}

func validateAzureShoot(c *check, old, infra *apisazure.InfrastructureConfig) field.ErrorList {
	var errs field.ErrorList
	n := c.shoot.Spec.Networking
	switch {
	case n == nil:
		errs = append(errs, field.Required(networkingPath, "networking field can't be empty for Azure shoots"))
	case n.Nodes == nil:
		errs = append(errs, field.Required(networkingPath.Child("nodes"), "a nodes CIDR must be provided for Azure shoots"))
	}
	if len(infra.Networks.Zones) > 0 && c.regionKnown() {
		errs = append(errs, azureZonesAgainstProfile(old, infra, c.regionZones(), infraConfigPath.Child("networks", "zones"))...)
	}
	var nodes, pods, services *cidr
	if n != nil {
		nodes = optionalCIDR(n.Nodes, field.NewPath("networking", "nodes"))
		pods = optionalCIDR(n.Pods, field.NewPath("networking", "pods"))
		services = optionalCIDR(n.Services, field.NewPath("networking", "services"))
	}
	errs = append(errs, validateAzureNetworks(infra, nodes, pods, services, infraConfigPath)...)
	errs = append(errs, validateAzureWorkers(c, infra)...)
	for i, w := range c.shoot.Spec.Provider.Workers {
		if w.ProviderConfig == nil {
			continue
		}
		if err := decodeErrorText(strictDecoder, w.ProviderConfig, &apisazure.WorkerConfig{}); err != nil {
			errs = append(errs, field.Invalid(workersPath.Index(i).Child("providerConfig"), err, "invalid providerConfig"))
		}
	}
	return errs
}

// azureZonesAgainstProfile: zones new to the infrastructureConfig must be
// zones of the region.
func azureZonesAgainstProfile(old, infra *apisazure.InfrastructureConfig, regionZones []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, z := range infra.Networks.Zones {
		if old != nil && slices.ContainsFunc(old.Networks.Zones, func(o apisazure.Zone) bool { return o.Name == z.Name }) {
			continue
		}
		if !slices.Contains(regionZones, strconv.Itoa(int(z.Name))) {
			errs = append(errs, field.NotSupported(path.Index(i).Child("name"), z.Name, regionZones))
		}
	}
	return errs
}

// validateAzureNetworks mirrors validateNetworkConfig.
func validateAzureNetworks(infra *apisazure.InfrastructureConfig, nodes, pods, services *cidr, path *field.Path) field.ErrorList {
	var (
		errs     field.ErrorList
		config   = infra.Networks
		networks = path.Child("networks")
		workersP = networks.Child("workers")
		zonesP   = networks.Child("zones")
		vnetP    = networks.Child("vnet")
		workers  *cidr
	)
	if config.Workers == nil && len(config.Zones) == 0 {
		return append(errs, field.Forbidden(workersP, "either workers or zones must be specified"))
	}
	if config.Workers != nil && len(config.Zones) > 0 {
		return append(errs, field.Forbidden(workersP, "workers and zones cannot be specified in parallel"))
	}
	if config.Workers != nil {
		workers = newCIDR(*config.Workers, workersP)
	}
	errs = append(errs, validateAzureVNet(&config, workers, nodes, pods, services, zonesP, vnetP)...)
	if len(config.Zones) == 0 {
		errs = append(errs, parse(workers)...)
		errs = append(errs, canonical(workersP, *config.Workers)...)
		return append(errs, nodes.subset(workers)...)
	}
	if !infra.Zoned {
		errs = append(errs, field.Forbidden(zonesP, "cannot specify zones in an non-zonal cluster"))
	}
	if config.NatGateway != nil {
		errs = append(errs, field.Forbidden(workersP, "natGateway cannot be specified when workers field is missing"))
	}
	if len(config.ServiceEndpoints) > 0 {
		errs = append(errs, field.Forbidden(workersP, "serviceEndpoints cannot be specified when workers field is missing"))
	}
	var zoneCIDRs []*cidr
	names := map[int32]bool{}
	for i, z := range config.Zones {
		zp := zonesP.Index(i)
		if names[z.Name] {
			errs = append(errs, field.Invalid(zp, z.Name, "the same zone cannot be specified multiple times"))
		}
		names[z.Name] = true
		zc := newCIDR(z.CIDR, zp.Child("cidr"))
		zoneCIDRs = append(zoneCIDRs, zc)
		errs = append(errs, canonical(zc.path, zc.value)...)
	}
	errs = append(errs, parse(zoneCIDRs...)...)
	errs = append(errs, nodes.subset(zoneCIDRs...)...)
	errs = append(errs, disjoint(zoneCIDRs)...)
	errs = append(errs, pods.notOverlap(zoneCIDRs...)...)
	return append(errs, services.notOverlap(zoneCIDRs...)...)
}

// validateAzureVNet mirrors validateVnetConfig.
func validateAzureVNet(config *apisazure.NetworkConfig, workers, nodes, pods, services *cidr, zonesP, vnetP *field.Path) field.ErrorList {
	var errs field.ErrorList
	vnet := config.VNet
	if (vnet.Name != nil) != (vnet.ResourceGroup != nil) {
		return append(errs, field.Invalid(vnetP, vnet, "a vnet cidr or vnet name and resource group need to be specified"))
	}
	if vnet.Name != nil && vnet.ResourceGroup != nil {
		if vnet.CIDR != nil {
			errs = append(errs, field.Invalid(vnetP.Child("cidr"), vnet, "specifying a cidr for an existing vnet is not possible"))
		}
		return errs
	}
	if vnet.CIDR == nil {
		if workers == nil {
			return append(errs, field.Forbidden(vnetP.Child("cidr"), "a vnet cidr or vnet reference must be specified when the workers field is not set"))
		}
		errs = append(errs, workers.subset(nodes)...)
		return append(errs, workers.notOverlap(pods, services)...)
	}
	v := newCIDR(*vnet.CIDR, vnetP.Child("cidr"))
	errs = append(errs, parse(v)...)
	errs = append(errs, canonical(vnetP.Child("cidr"), *vnet.CIDR)...)
	errs = append(errs, v.subset(nodes)...)
	errs = append(errs, v.notOverlap(pods, services)...)
	if workers != nil {
		errs = append(errs, v.subset(workers)...)
	}
	for i, z := range config.Zones {
		errs = append(errs, v.subset(newCIDR(z.CIDR, zonesP.Index(i).Child("cidr")))...)
	}
	return errs
}

// validateAzureWorkers mirrors ValidateWorkers.
func validateAzureWorkers(c *check, infra *apisazure.InfrastructureConfig) field.ErrorList {
	var errs field.ErrorList
	zones := map[string]bool{}
	for _, z := range infra.Networks.Zones {
		zones[strconv.Itoa(int(z.Name))] = true
	}
	for i, w := range c.shoot.Spec.Provider.Workers {
		errs = append(errs, validateAzureWorker(w, infra, zones, workersPath.Index(i))...)
	}
	return errs
}

// validateAzureWorker checks one pool: its volume, and zones as the
// cluster's zoning and the infrastructureConfig's zones allow.
func validateAzureWorker(w gardencore.Worker, infra *apisazure.InfrastructureConfig, infraZones map[string]bool, path *field.Path) field.ErrorList {
	errs := validateAzureVolume(w.Volume, path.Child("volume"))
	if infra.Zoned && len(w.Zones) == 0 {
		return append(errs, field.Required(path.Child("zones"), "at least one zone must be configured for zoned clusters"))
	}
	if !infra.Zoned && len(w.Zones) > 0 {
		return append(errs, field.Required(path.Child("zones"), "zones must not be specified for non zoned clusters"))
	}
	seen := map[string]bool{}
	for j, z := range w.Zones {
		if seen[z] {
			errs = append(errs, field.Invalid(path.Child("zones").Index(j), z, "must only be specified once per worker group"))
			continue
		}
		seen[z] = true
	}
	if len(infra.Networks.Zones) > 0 {
		for j, z := range w.Zones {
			if !infraZones[z] {
				errs = append(errs, field.Invalid(path.Child("zones").Index(j), z, "zone configuration must be specified in \"infrastructureConfig.networks.zones\""))
			}
		}
	}
	return errs
}

// validateAzureVolume wants a pool's volume with type and size, and not
// encrypted.
func validateAzureVolume(v *gardencore.Volume, path *field.Path) field.ErrorList {
	if v == nil {
		return field.ErrorList{field.Required(path, "must not be nil")}
	}
	var errs field.ErrorList
	if v.Type == nil {
		errs = append(errs, field.Required(path.Child("type"), "must not be empty"))
	}
	if v.VolumeSize == "" {
		errs = append(errs, field.Required(path.Child("size"), "must not be empty"))
	}
	if v.Encrypted != nil {
		errs = append(errs, field.NotSupported(path.Child("encrypted"), *v.Encrypted, []string{}))
	}
	return errs
}

// validateAzureInfraUpdate mirrors ValidateInfrastructureConfigUpdate.
func validateAzureInfraUpdate(old, infra *apisazure.InfrastructureConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(infra.ResourceGroup, old.ResourceGroup, path.Child("resourceGroup"))...)
	if old.Networks.Workers != nil && infra.Networks.Workers != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.Workers, old.Networks.Workers, path.Child("networks", "workers"))...)
	}
	errs = append(errs, validateAzureSubnetsUpdate(old.Networks, infra.Networks, path.Child("networks"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(old.Zoned, infra.Zoned, path.Child("zoned"))...)
	return append(errs, validateAzureVNetUpdate(old.Networks.VNet, infra.Networks.VNet, path.Child("networks", "vnet"))...)
}

// validateAzureSubnetsUpdate: zones' networks are immutable and zones
// cannot be removed; a single workers network may become zones' networks
// (one of them the old workers network) but not the other way round.
func validateAzureSubnetsUpdate(old, networks apisazure.NetworkConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	oldSingle, single := len(old.Zones) == 0, len(networks.Zones) == 0
	switch {
	case !oldSingle && !single:
		if len(old.Zones) > len(networks.Zones) {
			errs = append(errs, field.Forbidden(path.Child("zones"), "removing zones is not allowed"))
		}
		for i, z := range networks.Zones {
			for _, o := range old.Zones {
				if z.Name == o.Name {
					errs = append(errs, apivalidation.ValidateImmutableField(z.CIDR, o.CIDR, path.Child("zones").Index(i).Child("cidr"))...)
				}
			}
		}
	case !oldSingle && single:
		errs = append(errs, field.Forbidden(path.Child("worker"), "updating the infrastructure configuration from using dedicated subnets per zone to using single subnet is not allowed"))
	case oldSingle && !single:
		if !slices.ContainsFunc(networks.Zones, func(z apisazure.Zone) bool { return old.Workers != nil && z.CIDR == *old.Workers }) {
			errs = append(errs, field.Forbidden(path.Child("zones"), "when updating InfrastructureConfig to use dedicated subnets per zones, the CIDR for one of the zones must match that of the previous config.networks.workers"))
		}
	default:
		errs = append(errs, apivalidation.ValidateImmutableField(networks.Workers, old.Workers, path.Child("workers"))...)
	}
	return errs
}

// validateAzureVNetUpdate: a referenced (or default) VNet is immutable, a
// VNet's CIDR can only grow.
func validateAzureVNetUpdate(old, vnet apisazure.VNet, path *field.Path) field.ErrorList {
	switch {
	case old.Name != nil && old.ResourceGroup != nil, old.CIDR == nil && old.Name == nil && old.ResourceGroup == nil:
		errs := apivalidation.ValidateImmutableField(vnet.Name, old.Name, path.Child("name"))
		return append(errs, apivalidation.ValidateImmutableField(vnet.ResourceGroup, old.ResourceGroup, path.Child("resourceGroup"))...)
	case old.CIDR != nil && vnet.CIDR == nil:
		return field.ErrorList{field.Invalid(path.Child("cidr"), vnet.CIDR, "vnet cidr need to be specified")}
	case old.CIDR != nil:
		o, n := newCIDR(*old.CIDR, path.Child("cidr")), newCIDR(*vnet.CIDR, path.Child("cidr"))
		if len(n.subset(o)) > 0 {
			return field.ErrorList{field.Invalid(n.path, n.value, "VNet CIDR blocks can only be expanded")}
		}
	}
	return nil
}
