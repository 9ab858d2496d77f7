package admission

import (
	"fmt"

	apisopenstack "github.com/gardener/gardener-extension-provider-openstack/pkg/apis/openstack"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// openstackContext is what the openstack extension decodes of a shoot.
type openstackContext struct {
	infra *apisopenstack.InfrastructureConfig
	cp    *apisopenstack.ControlPlaneConfig
}

// validateOpenStack mirrors the shoot validator of
// gardener-extension-provider-openstack and pkg/apis/openstack/validation:
// both configs required, the workers network inside the nodes network, the
// networks and the floating pool immutable. The checks against the cloud
// profile's floating pools, which need the project's credentials, are left
// out: the simulated garden serves no SecretBindings.
func validateOpenStack(c *check) error {
	ctx, err := newOpenStackContext(strictDecoder, c.shoot.Spec.Provider.InfrastructureConfig, c.shoot.Spec.Provider.ControlPlaneConfig)
	if c.op == Create {
		if err != nil {
			return err
		}
		return aggregate(validateOpenStackShoot(c, ctx))
	}
	old, oerr := newOpenStackContext(lenientDecoder, c.old.Spec.Provider.InfrastructureConfig, c.old.Spec.Provider.ControlPlaneConfig)
	if oerr != nil {
		return oerr
	}
	if err != nil {
		return err
	}
	var errs field.ErrorList
	errs = append(errs, validateOpenStackInfraUpdate(old.infra, ctx.infra, infraConfigPath)...)
	if wErrs := validateWorkersZonesUpdate(c.shoot.Spec.Provider.Workers, c.old.Spec.Provider.Workers, workersPath); len(wErrs) > 0 {
		return aggregate(wErrs)
	}
	errs = append(errs, validateOpenStackShoot(c, ctx)...)
	return aggregate(errs)
}

func newOpenStackContext(d runtime.Decoder, infraRaw, cpRaw *runtime.RawExtension) (*openstackContext, error) {
	if infraRaw == nil {
		return nil, field.Required(infraConfigPath, "infrastructureConfig must be set for OpenStack shoots")
	}
	infra := &apisopenstack.InfrastructureConfig{}
	if err := decodeErrorText(d, infraRaw, infra); err != nil {
		return nil, fmt.Errorf("error decoding infrastructureConfig: %v", err) //nolint:errorlint // The extension formats with %v.
	}
	if cpRaw == nil {
		return nil, field.Required(cpConfigPath, "controlPlaneConfig must be set for OpenStack shoots")
	}
	cp := &apisopenstack.ControlPlaneConfig{}
	if err := decodeErrorText(d, cpRaw, cp); err != nil {
		return nil, fmt.Errorf("error decoding controlPlaneConfig: %v", err) //nolint:errorlint // The extension formats with %v.
	}
	return &openstackContext{infra: infra, cp: cp}, nil
}

func validateOpenStackShoot(c *check, ctx *openstackContext) field.ErrorList {
	var errs field.ErrorList
	if n := c.shoot.Spec.Networking; n != nil {
		if n.Nodes == nil {
			errs = append(errs, field.Required(networkingPath.Child("nodes"), "a nodes CIDR must be provided for Openstack shoots"))
		}
		errs = append(errs, validateOpenStackInfra(ctx.infra, n.Nodes, infraConfigPath)...)
	}
	if ctx.cp.LoadBalancerProvider == "" {
		errs = append(errs, field.Required(cpConfigPath.Child("loadBalancerProvider"), "must provide the name of a load balancer provider"))
	}
	for i, w := range c.shoot.Spec.Provider.Workers {
		path := workersPath.Index(i)
		if len(w.Zones) == 0 {
			errs = append(errs, field.Required(path.Child("zones"), "at least one zone must be configured"))
			continue
		}
		if w.Volume != nil && w.Volume.Type != nil && w.Volume.VolumeSize == "" {
			errs = append(errs, field.Forbidden(path.Child("volume", "type"), "specifying volume type without a custom volume size is not allowed"))
		}
	}
	return errs
}

// validateOpenStackInfra mirrors the network checks of
// ValidateInfrastructureConfig.
func validateOpenStackInfra(infra *apisopenstack.InfrastructureConfig, nodesCIDR *string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if infra.FloatingPoolName == "" {
		errs = append(errs, field.Required(path.Child("floatingPoolName"), "cannot be empty"))
	}
	nodes := optionalCIDR(nodesCIDR, field.NewPath("networking", "nodes"))
	networks := path.Child("networks")
	if infra.Networks.Worker == "" && infra.Networks.Workers == "" {
		errs = append(errs, field.Required(networks.Child("workers"), "must specify the network range for the worker network"))
	}
	var workers *cidr
	if infra.Networks.Worker != "" {
		workers = newCIDR(infra.Networks.Worker, networks.Child("worker"))
		errs = append(errs, parse(workers)...)
		errs = append(errs, canonical(networks.Child("worker"), infra.Networks.Worker)...)
	}
	if infra.Networks.Workers != "" {
		workers = newCIDR(infra.Networks.Workers, networks.Child("workers"))
		errs = append(errs, parse(workers)...)
		errs = append(errs, canonical(networks.Child("workers"), infra.Networks.Workers)...)
	}
	return append(errs, nodes.subset(workers)...)
}

// validateOpenStackInfraUpdate mirrors ValidateInfrastructureConfigUpdate.
func validateOpenStackInfraUpdate(old, infra *apisopenstack.InfrastructureConfig, path *field.Path) field.ErrorList {
	networks, oldNetworks := infra.DeepCopy().Networks, old.DeepCopy().Networks
	if oldNetworks.ShareNetwork == nil || !oldNetworks.ShareNetwork.Enabled {
		networks.ShareNetwork, oldNetworks.ShareNetwork = nil, nil
	}
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(networks, oldNetworks, path.Child("networks"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(infra.FloatingPoolName, old.FloatingPoolName, path.Child("floatingPoolName"))...)
	return append(errs, apivalidation.ValidateImmutableField(infra.FloatingPoolSubnetName, old.FloatingPoolSubnetName, path.Child("floatingPoolSubnetName"))...)
}
