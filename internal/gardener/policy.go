package gardener

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// The landscape wins over the Runtime. A Runtime's provider configurations reach the provider
// extension only through an allowlist: no instance profile, no instance metadata settings
// weaker than the landscape's, no ids of existing infrastructure the shoot does not already
// use, no registry cache credentials the landscape owns and no control plane pool. A refused
// field is a terminal user error that names it.

// ErrFieldNotAllowed means the Runtime sets a field the landscape does not allow it to set.
var ErrFieldNotAllowed = errors.New("not allowed by the landscape")

// refused returns the terminal error for a refused field.
func refused(rt *infrav1.Runtime, path, why string) error {
	return retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("runtime %s: %s: %s: %w", rt.Name, path, why, ErrFieldNotAllowed))
}

// The landscape's instance metadata settings on AWS workers: session tokens required, and a hop
// limit of 2, enough for pods with their own network namespace on the node and no more.
const (
	imdsTokensRequired = "required"
	imdsHopLimit       = 2
)

// awsWorkerAPIVersion and awsWorkerKind are the AWS WorkerConfig's type.
const (
	awsWorkerAPIVersion = "aws.provider.extensions.gardener.cloud/v1alpha1"
	awsWorkerKind       = "WorkerConfig"
)

// awsWorkerProviderConfig checks the providerConfig of an AWS worker pool and, with IMDSv2 on,
// merges the landscape's instance metadata options into it: a pool without one gets the
// landscape's WorkerConfig, a pool with its own keeps what it sets and gets the landscape's
// options. An instance profile is refused: it would give every pod on the node the profile's
// AWS permissions. Instance metadata options weaker than the landscape's are refused.
func (b *shootBuilder) awsWorkerProviderConfig(pool string, in *runtime.RawExtension) (*runtime.RawExtension, error) {
	path := fmt.Sprintf("spec.shoot.provider.workers[%s].providerConfig", pool)
	if in == nil || len(in.Raw) == 0 {
		if !b.opts.AWSIMDSv2 {
			return in, nil
		}
		return rawJSON(awsWorkerConfig()), nil
	}
	var cfg map[string]any
	if err := json.Unmarshal(in.Raw, &cfg); err != nil || cfg == nil {
		return nil, refused(b.rt, path, "must be a JSON object")
	}
	if _, ok := cfg["iamInstanceProfile"]; ok {
		return nil, refused(b.rt, path+".iamInstanceProfile", "an instance profile gives every pod on the node its permissions")
	}
	if !b.opts.AWSIMDSv2 {
		return in, nil
	}
	imds, _ := cfg["instanceMetadataOptions"].(map[string]any)
	if imds == nil {
		if _, ok := cfg["instanceMetadataOptions"]; ok {
			return nil, refused(b.rt, path+".instanceMetadataOptions", "must be an object")
		}
		imds = map[string]any{}
	}
	if err := b.checkIMDS(path+".instanceMetadataOptions", imds); err != nil {
		return nil, err
	}
	imds["httpTokens"] = imdsTokensRequired
	if _, ok := imds["httpPutResponseHopLimit"]; !ok {
		imds["httpPutResponseHopLimit"] = imdsHopLimit
	}
	cfg["instanceMetadataOptions"] = imds
	if _, ok := cfg["apiVersion"]; !ok {
		cfg["apiVersion"] = awsWorkerAPIVersion
	}
	if _, ok := cfg["kind"]; !ok {
		cfg["kind"] = awsWorkerKind
	}
	return rawJSON(cfg), nil
}

// checkIMDS refuses instance metadata options weaker than the landscape's: tokens other than
// required, a hop limit above the landscape's, or the metadata endpoint's settings other than
// enabled.
func (b *shootBuilder) checkIMDS(path string, imds map[string]any) error {
	if v, ok := imds["httpTokens"]; ok && v != imdsTokensRequired {
		return refused(b.rt, path+".httpTokens", fmt.Sprintf("the landscape requires %q", imdsTokensRequired))
	}
	if v, ok := imds["httpPutResponseHopLimit"]; ok {
		n, isNumber := v.(float64)
		if !isNumber || n < 1 || n > imdsHopLimit || n != float64(int(n)) {
			return refused(b.rt, path+".httpPutResponseHopLimit", fmt.Sprintf("must be a whole number from 1 to %d", imdsHopLimit))
		}
	}
	return nil
}

// infrastructureIDs are, per provider type, the paths of an infrastructureConfig that name
// existing infrastructure (a VPC, a virtual network, a router) instead of letting the provider
// extension create the shoot's own.
var infrastructureIDs = map[string][][]string{
	"aws":       {{"networks", "vpc", "id"}},
	"alicloud":  {{"networks", "vpc", "id"}},
	"azure":     {{"resourceGroup"}, {"networks", "vnet", "name"}, {"networks", "vnet", "resourceGroup"}},
	"gcp":       {{"networks", "vpc", "name"}},
	"openstack": {{"networks", "id"}, {"networks", "router", "id"}, {"networks", "subnetId"}},
}

// checkInfrastructureIDs refuses a Runtime's infrastructureConfig that names existing
// infrastructure, unless the live shoot already uses the same: the landscape allows no shoot
// into a network it does not own, and a shoot that is there stays there.
func (b *shootBuilder) checkInfrastructureIDs(in *runtime.RawExtension) error {
	if in == nil || len(in.Raw) == 0 {
		return nil
	}
	var cfg, live map[string]any
	if err := json.Unmarshal(in.Raw, &cfg); err != nil {
		return refused(b.rt, "spec.shoot.provider.infrastructureConfig", "must be a JSON object")
	}
	if b.current != nil && b.current.Spec.Provider.InfrastructureConfig != nil {
		_ = json.Unmarshal(b.current.Spec.Provider.InfrastructureConfig.Raw, &live) // An unreadable live config allows nothing.
	}
	for _, path := range infrastructureIDs[b.rt.Spec.Shoot.Provider.Type] {
		v, ok := lookup(cfg, path)
		if !ok {
			continue
		}
		if lv, lok := lookup(live, path); lok && reflect.DeepEqual(v, lv) {
			continue
		}
		return refused(b.rt, "spec.shoot.provider.infrastructureConfig."+strings.Join(path, "."), "names existing infrastructure the landscape does not allow")
	}
	return nil
}

// lookup returns the value at path in a decoded JSON object.
func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, key := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// checkControlPlanePool refuses a worker pool that hosts the shoot's own control plane:
// landscape shoots have their control plane on a seed, and Gardener refuses such a pool on them.
func checkControlPlanePool(rt *infrav1.Runtime, w *gardencorev1beta1.Worker) error {
	if w.ControlPlane == nil {
		return nil
	}
	return refused(rt, fmt.Sprintf("spec.shoot.provider.workers[%s].controlPlane", w.Name), "a runtime's control plane runs on a seed, not on its own workers")
}

// checkRegistryCaches refuses a registry cache with credentials. Upstream names them
// reg-cache-<uid> in the shoot and copies the Secret from the runtime cluster into the project with
// its registry cache config controller, which this manager does not have; a name passed through as
// written would name a resource of the shoot it does not own, such as the landscape's DNS or audit
// log credentials, or none at all.
func (b *shootBuilder) checkRegistryCaches() error {
	for i, c := range b.rt.Spec.ImageRegistryCache {
		if name := deref(c.Config.SecretReferenceName); name != "" {
			path := fmt.Sprintf("spec.imageRegistryCache[%d].config.secretReferenceName", i)
			return refused(b.rt, path, fmt.Sprintf("registry cache credentials (%q) are not supported: upstream copies them from the runtime cluster with its registry cache config controller, which this manager does not have", name))
		}
	}
	return nil
}
