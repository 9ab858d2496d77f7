package admission

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	apisaws "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws"
	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateAWS mirrors the shoot validator of gardener-extension-provider-aws
// (pkg/admission/validator/shoot.go) and the infrastructure checks of
// pkg/apis/aws/validation.
func validateAWS(c *check) error {
	if c.op == Update {
		return validateAWSUpdate(c)
	}
	if _, err := awsBase(c, nil); err != nil {
		return err
	}
	return validateAWSShoot(c)
}

func validateAWSUpdate(c *check) error {
	if c.old.Spec.Provider.InfrastructureConfig == nil {
		return field.InternalError(infraConfigPath, errors.New("InfrastructureConfig is not available on old shoot"))
	}
	old, err := decodeAWSInfra(lenientDecoder, c.old.Spec.Provider.InfrastructureConfig)
	if err != nil {
		return err
	}
	infra, err := awsBase(c, old)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(old, infra) {
		if errs := validateAWSInfraUpdate(old, infra); len(errs) > 0 {
			return aggregate(errs)
		}
	}
	if errs := validateWorkersZonesUpdate(c.shoot.Spec.Provider.Workers, c.old.Spec.Provider.Workers, workersPath); len(errs) > 0 {
		return aggregate(errs)
	}
	return validateAWSShoot(c)
}

// awsBase decodes the infrastructureConfig and checks its zones against
// the profile's region.
func awsBase(c *check, old *apisaws.InfrastructureConfig) (*apisaws.InfrastructureConfig, error) {
	raw := c.shoot.Spec.Provider.InfrastructureConfig
	if raw == nil {
		return nil, field.Required(infraConfigPath, "InfrastructureConfig must be set for AWS shoots")
	}
	infra, err := decodeAWSInfra(strictDecoder, raw)
	if err != nil {
		return nil, err
	}
	if errs := awsZonesAgainstProfile(old, infra, c.regionZones(), c.regionKnown(), infraConfigPath.Child("network")); len(errs) > 0 {
		return nil, aggregate(errs)
	}
	return infra, nil
}

func decodeAWSInfra(d runtime.Decoder, raw *runtime.RawExtension) (*apisaws.InfrastructureConfig, error) {
	infra := &apisaws.InfrastructureConfig{}
	if err := decodeErrorText(d, raw, infra); err != nil {
		return nil, field.Invalid(infraConfigPath, string(raw.Raw), "isn't a supported version")
	}
	return infra, nil
}

// awsZonesAgainstProfile: new or changed zones must be zones of the region,
// each once.
func awsZonesAgainstProfile(old, infra *apisaws.InfrastructureConfig, regionZones []string, known bool, path *field.Path) field.ErrorList {
	if !known {
		return nil
	}
	var errs field.ErrorList
	used := map[string]bool{}
	for i, z := range infra.Networks.Zones {
		if old != nil && len(old.Networks.Zones) > i && old.Networks.Zones[i] == z {
			used[z.Name] = true
			continue
		}
		if !slices.Contains(regionZones, z.Name) {
			errs = append(errs, field.NotSupported(path.Child("zones").Index(i).Child("name"), z.Name, regionZones))
		}
		if used[z.Name] {
			errs = append(errs, field.Duplicate(path.Child("zones").Index(i).Child("name"), z.Name))
		}
		used[z.Name] = true
	}
	return errs
}

func validateAWSShoot(c *check) error {
	var errs field.ErrorList
	n := c.shoot.Spec.Networking
	if n != nil && n.Nodes == nil && (n.IPFamilies == nil || slices.Contains(n.IPFamilies, gardencore.IPFamilyIPv4)) {
		errs = append(errs, field.Required(networkingPath.Child("nodes"), "a nodes CIDR must be provided for AWS shoots"))
	}
	raw := c.shoot.Spec.Provider.InfrastructureConfig
	if raw == nil {
		return field.Required(infraConfigPath, "InfrastructureConfig must be set for AWS shoots")
	}
	infra, err := decodeAWSInfra(strictDecoder, raw)
	if err != nil {
		return err
	}
	var nodes, pods, services *string
	var families []gardencore.IPFamily
	if n != nil {
		nodes, pods, services, families = n.Nodes, n.Pods, n.Services, n.IPFamilies
	}
	errs = append(errs, validateAWSInfra(infra, families, nodes, pods, services)...)
	if cp := c.shoot.Spec.Provider.ControlPlaneConfig; cp != nil {
		if err := decodeErrorText(strictDecoder, cp, &apisaws.ControlPlaneConfig{}); err != nil {
			return field.Invalid(cpConfigPath, string(cp.Raw), "isn't a supported version")
		}
	}
	var zones []string
	for _, z := range infra.Networks.Zones {
		zones = append(zones, z.Name)
	}
	for i, w := range c.shoot.Spec.Provider.Workers {
		config := &apisaws.WorkerConfig{}
		if w.ProviderConfig != nil {
			if err := decodeErrorText(strictDecoder, w.ProviderConfig, config); err != nil {
				return field.Invalid(workersPath.Index(i).Child("providerConfig"), string(w.ProviderConfig.Raw), "isn't a supported version")
			}
		}
		errs = append(errs, validateWorkerZones(w, zones, workersPath.Index(i), volumeSizeAndType)...)
		if w.ProviderConfig != nil {
			errs = append(errs, validateAWSInstanceMetadata(config.InstanceMetadataOptions, workersPath.Index(i).Child("providerConfig", "instanceMetadataOptions"))...)
		}
	}
	return aggregate(errs)
}

// validateAWSInstanceMetadata mirrors validateInstanceMetadata of the
// extension's WorkerConfig validation: a hop limit between 1 and 64, and
// session tokens required or optional.
func validateAWSInstanceMetadata(md *apisaws.InstanceMetadataOptions, path *field.Path) field.ErrorList {
	if md == nil {
		return nil
	}
	var errs field.ErrorList
	if limit := md.HTTPPutResponseHopLimit; limit != nil && (*limit < 1 || *limit > 64) {
		errs = append(errs, field.Invalid(path.Child("httpPutResponseHopLimit"), *limit, "only values between 1 and 64 are allowed"))
	}
	if tokens := md.HTTPTokens; tokens != nil {
		valid := []apisaws.HTTPTokensValue{apisaws.HTTPTokensRequired, apisaws.HTTPTokensOptional}
		if !slices.Contains(valid, *tokens) {
			errs = append(errs, field.Invalid(path.Child("httpTokens"), *tokens, fmt.Sprintf("only the following values are allowed: %v", valid)))
		}
	}
	return errs
}

// validateAWSInfra mirrors ValidateInfrastructureConfig: zone networks
// inside the nodes network and the VPC, disjoint from each other and from
// pods and services. Its paths are relative, as the extension's are.
func validateAWSInfra(infra *apisaws.InfrastructureConfig, families []gardencore.IPFamily, nodesCIDR, podsCIDR, servicesCIDR *string) field.ErrorList {
	var errs field.ErrorList
	nodes := optionalCIDR(nodesCIDR, field.NewPath("networking", "nodes"))
	pods := optionalCIDR(podsCIDR, field.NewPath("networking", "pods"))
	services := optionalCIDR(servicesCIDR, field.NewPath("networking", "services"))
	networks := field.NewPath("networks")
	if len(infra.Networks.Zones) == 0 {
		errs = append(errs, field.Required(networks.Child("zones"), "must specify at least the networks for one zone"))
	}
	var cidrs, workers []*cidr
	for i, z := range infra.Networks.Zones {
		zp := networks.Child("zones").Index(i)
		cidrs = append(cidrs, newCIDR(z.Public, zp.Child("public")))
		errs = append(errs, canonical(zp.Child("public"), z.Public)...)
		cidrs = append(cidrs, newCIDR(z.Internal, zp.Child("internal")))
		errs = append(errs, canonical(zp.Child("internal"), z.Internal)...)
		if families == nil || slices.Contains(families, gardencore.IPFamilyIPv4) {
			w := newCIDR(z.Workers, zp.Child("workers"))
			cidrs = append(cidrs, w)
			errs = append(errs, canonical(zp.Child("workers"), z.Workers)...)
			workers = append(workers, w)
		}
	}
	errs = append(errs, parse(cidrs...)...)
	errs = append(errs, nodes.subset(workers...)...)
	vpc := infra.Networks.VPC
	switch {
	case vpc.ID == nil && vpc.CIDR == nil:
		errs = append(errs, field.Invalid(networks.Child("vpc"), vpc, "must specify either a vpc id or a cidr"))
	case vpc.ID != nil && vpc.CIDR != nil:
		errs = append(errs, field.Invalid(networks.Child("vpc"), vpc, "cannot specify both vpc id and cidr"))
	case vpc.CIDR != nil && !slices.Contains(families, gardencore.IPFamilyIPv6):
		path := networks.Child("vpc", "cidr")
		v := newCIDR(*vpc.CIDR, path)
		errs = append(errs, canonical(path, *vpc.CIDR)...)
		errs = append(errs, parse(v)...)
		errs = append(errs, v.subset(nodes)...)
		errs = append(errs, v.subset(cidrs...)...)
		errs = append(errs, v.notOverlap(pods, services)...)
	}
	errs = append(errs, disjoint(cidrs)...)
	errs = append(errs, pods.notOverlap(cidrs...)...)
	return append(errs, services.notOverlap(cidrs...)...)
}

// validateAWSInfraUpdate mirrors ValidateInfrastructureConfigUpdate: the
// VPC and existing zones are immutable, zones may not be removed.
func validateAWSInfraUpdate(old, infra *apisaws.InfrastructureConfig) field.ErrorList {
	var errs field.ErrorList
	if old.ElasticFileSystem != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(infra.ElasticFileSystem, old.ElasticFileSystem, field.NewPath("elasticFileSystem"))...)
	}
	errs = append(errs, apivalidation.ValidateImmutableField(infra.EnableDedicatedTenancyForVPC, old.EnableDedicatedTenancyForVPC, field.NewPath("enableDedicatedTenancyForVPC"))...)
	vpc := field.NewPath("networks.vpc")
	errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.VPC.ID, old.Networks.VPC.ID, vpc.Child("id"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.VPC.CIDR, old.Networks.VPC.CIDR, vpc.Child("cidr"))...)
	if len(old.Networks.Zones) > len(infra.Networks.Zones) {
		return append(errs, field.Forbidden(field.NewPath("networks.zones"), "removing zones is not allowed"))
	}
	for i, o := range old.Networks.Zones {
		zp := field.NewPath("networks.zones").Index(i)
		z := infra.Networks.Zones[i]
		errs = append(errs, apivalidation.ValidateImmutableField(z.Name, o.Name, zp.Child("name"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(z.Public, o.Public, zp.Child("public"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(z.Internal, o.Internal, zp.Child("internal"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(z.Workers, o.Workers, zp.Child("workers"))...)
	}
	if old.DualStack != nil && old.DualStack.Enabled && (infra.DualStack == nil || !infra.DualStack.Enabled) {
		errs = append(errs, field.Forbidden(field.NewPath("dualStack.enabled"), "field can't be changed from \"true\" to \"false\""))
	}
	return errs
}

// regionKnown reports whether the profile offers the shoot's region.
func (c *check) regionKnown() bool {
	return slices.ContainsFunc(c.profile.Spec.Regions, func(r gardencorev1beta1.Region) bool { return r.Name == c.shoot.Spec.Region })
}
