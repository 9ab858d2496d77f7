package admission

import (
	"fmt"
	"reflect"
	"slices"

	apisgcp "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// gcpContext is what the gcp extension decodes of a shoot.
type gcpContext struct {
	infra *apisgcp.InfrastructureConfig
	cp    *apisgcp.ControlPlaneConfig
}

// validateGCP mirrors the shoot validator of gardener-extension-provider-gcp
// and pkg/apis/gcp/validation: both configs required, the workers network
// inside the nodes network (it may only grow), the control plane zone a zone
// of the region and of a worker pool.
func validateGCP(c *check) error {
	if c.op == Create {
		ctx, err := newGCPContext(strictDecoder, c.shoot.Spec.Provider.InfrastructureConfig, c.shoot.Spec.Provider.ControlPlaneConfig)
		if err != nil {
			return err
		}
		return aggregate(validateGCPShoot(c, ctx))
	}
	old, err := newGCPContext(lenientDecoder, c.old.Spec.Provider.InfrastructureConfig, c.old.Spec.Provider.ControlPlaneConfig)
	if err != nil {
		return err
	}
	ctx, err := newGCPContext(strictDecoder, c.shoot.Spec.Provider.InfrastructureConfig, c.shoot.Spec.Provider.ControlPlaneConfig)
	if err != nil {
		return err
	}
	var errs field.ErrorList
	if !reflect.DeepEqual(old.infra, ctx.infra) {
		errs = append(errs, validateGCPInfraUpdate(old.infra, ctx.infra, infraConfigPath)...)
	}
	if !reflect.DeepEqual(old.cp, ctx.cp) {
		errs = append(errs, apivalidation.ValidateImmutableField(ctx.cp.Zone, old.cp.Zone, cpConfigPath.Child("zone"))...)
	}
	errs = append(errs, validateWorkersZonesUpdate(c.shoot.Spec.Provider.Workers, c.old.Spec.Provider.Workers, workersPath)...)
	errs = append(errs, validateGCPShoot(c, ctx)...)
	return aggregate(errs)
}

func newGCPContext(d runtime.Decoder, infraRaw, cpRaw *runtime.RawExtension) (*gcpContext, error) {
	if infraRaw == nil {
		return nil, field.Required(infraConfigPath, "infrastructureConfig must be set for GCP shoots")
	}
	infra := &apisgcp.InfrastructureConfig{}
	if err := decodeErrorText(d, infraRaw, infra); err != nil {
		return nil, fmt.Errorf("error decoding infrastructureConfig: %v", err) //nolint:errorlint // The extension formats with %v.
	}
	if cpRaw == nil {
		return nil, field.Required(cpConfigPath, "controlPlaneConfig must be set for GCP shoots")
	}
	cp := &apisgcp.ControlPlaneConfig{}
	if err := decodeErrorText(d, cpRaw, cp); err != nil {
		return nil, fmt.Errorf("error decoding controlPlaneConfig: %v", err) //nolint:errorlint // The extension formats with %v.
	}
	return &gcpContext{infra: infra, cp: cp}, nil
}

func validateGCPShoot(c *check, ctx *gcpContext) field.ErrorList {
	var errs field.ErrorList
	if _, err := parseSemver(c.shoot.Spec.Kubernetes.Version); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("kubernetes", "version"), c.shoot.Spec.Kubernetes.Version, fmt.Sprintf("invalid kubernetes version: %s", err.Error())))
	}
	if n := c.shoot.Spec.Networking; n != nil {
		if n.Nodes == nil {
			errs = append(errs, field.Required(networkingPath.Child("nodes"), "a nodes CIDR must be provided for GCP shoots"))
		}
		errs = append(errs, validateGCPInfra(ctx.infra, n.Nodes, n.Pods, n.Services, infraConfigPath)...)
	}
	var workerZones []string
	for i, w := range c.shoot.Spec.Provider.Workers {
		path := workersPath.Index(i)
		if w.Volume == nil {
			errs = append(errs, field.Required(path.Child("volume"), "must not be nil"))
		} else if w.Volume.Type == nil {
			errs = append(errs, field.Required(path.Child("volume", "type"), "must not be empty"))
		}
		if len(w.Zones) == 0 {
			errs = append(errs, field.Required(path.Child("zones"), "at least one zone must be configured"))
		}
		workerZones = append(workerZones, w.Zones...)
	}
	cpZone := cpConfigPath.Child("zone")
	if ctx.cp.Zone == "" {
		errs = append(errs, field.Required(cpZone, "must provide the name of a zone in this region"))
	} else if allowed := c.regionZones(); !slices.Contains(allowed, ctx.cp.Zone) {
		errs = append(errs, field.NotSupported(cpZone, ctx.cp.Zone, allowed))
	}
	if !slices.Contains(workerZones, ctx.cp.Zone) {
		errs = append(errs, field.Invalid(cpZone, ctx.cp.Zone, "must be part of at least one worker zone"))
	}
	return errs
}

// validateGCPInfra mirrors the network checks of ValidateInfrastructureConfig.
func validateGCPInfra(infra *apisgcp.InfrastructureConfig, nodesCIDR, podsCIDR, servicesCIDR *string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	nodes := optionalCIDR(nodesCIDR, field.NewPath("networking", "nodes"))
	pods := optionalCIDR(podsCIDR, field.NewPath("networking", "pods"))
	services := optionalCIDR(servicesCIDR, field.NewPath("networking", "services"))
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
	if infra.Networks.Internal != nil {
		internal := newCIDR(*infra.Networks.Internal, networks.Child("internal"))
		errs = append(errs, parse(internal)...)
		errs = append(errs, canonical(networks.Child("internal"), *infra.Networks.Internal)...)
		errs = append(errs, pods.notOverlap(internal)...)
		errs = append(errs, services.notOverlap(internal)...)
		errs = append(errs, nodes.notOverlap(internal)...)
		errs = append(errs, workers.notOverlap(internal)...)
	}
	errs = append(errs, nodes.subset(workers)...)
	if vpc := infra.Networks.VPC; vpc != nil && vpc.Name == "" {
		errs = append(errs, field.Invalid(networks.Child("vpc", "name"), vpc.Name, "vpc name must not be empty when vpc key is provided"))
	}
	return errs
}

// validateGCPInfraUpdate mirrors ValidateInfrastructureConfigUpdate: the
// VPC is immutable and the workers network may only grow.
func validateGCPInfraUpdate(old, infra *apisgcp.InfrastructureConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	networks := path.Child("networks")
	vpc := networks.Child("vpc")
	if old.Networks.VPC != nil && infra.Networks.VPC == nil {
		errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.VPC, old.Networks.VPC, vpc)...)
	}
	if old.Networks.VPC != nil && infra.Networks.VPC != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.VPC.Name, old.Networks.VPC.Name, vpc.Child("name"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.VPC.CloudRouter, old.Networks.VPC.CloudRouter, vpc.Child("cloudRouter"))...)
		if old.Networks.Internal != nil {
			errs = append(errs, apivalidation.ValidateImmutableField(infra.Networks.Internal, old.Networks.Internal, networks.Child("internal"))...)
		}
	}
	workers := newCIDR(infra.Networks.Worker, networks.Child("worker"))
	if infra.Networks.Workers != "" {
		workers = newCIDR(infra.Networks.Workers, networks.Child("workers"))
	}
	oldWorkers := newCIDR(old.Networks.Worker, networks.Child("worker"))
	if old.Networks.Workers != "" {
		oldWorkers = newCIDR(old.Networks.Workers, networks.Child("workers"))
	}
	if len(workers.subset(oldWorkers)) > 0 {
		errs = append(errs, field.Invalid(workers.path, workers.value, "worker CIDR blocks can only be expanded"))
	}
	return errs
}
