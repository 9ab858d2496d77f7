package gardener

import (
	"encoding/json"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// workers renders the worker pools followed by the additional worker pools.
func (b *shootBuilder) workers() ([]gardencorev1beta1.Worker, error) {
	in := b.rt.Spec.Shoot.Provider
	pools := slices.Clone(in.Workers)
	if in.AdditionalWorkers != nil {
		pools = append(pools, *in.AdditionalWorkers...)
	}
	out := make([]gardencorev1beta1.Worker, 0, len(pools))
	for i := range pools {
		w, err := b.worker(&pools[i])
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// worker renders one worker pool. The Runtime's Worker has Gardener's field names and every
// field of Gardener's Worker, so the conversion goes through JSON and cannot drop a field;
// then the defaults are filled in: containerd, the default machine image, and never a machine
// image version below the one the pool runs.
func (b *shootBuilder) worker(in *infrav1.Worker) (gardencorev1beta1.Worker, error) {
	var out gardencorev1beta1.Worker
	if err := convertJSON(in, &out); err != nil {
		return out, retry.Terminal(ReasonInvalidRuntime, fmt.Errorf("render worker pool %s: %w", in.Name, err))
	}
	if out.CRI == nil {
		out.CRI = &gardencorev1beta1.CRI{}
	}
	if out.CRI.Name == "" {
		out.CRI.Name = gardencorev1beta1.CRINameContainerD
	}
	out.Machine.Image = machineImage(out.Machine.Image, b.opts)
	out.MachineControllerManagerSettings = drainSettings(out.MachineControllerManagerSettings, b.opts.WorkerMachineControllerManager)
	if err := checkControlPlanePool(b.rt, &out); err != nil {
		return out, err
	}
	if b.rt.Spec.Shoot.Provider.Type == "aws" {
		cfg, err := b.awsWorkerProviderConfig(out.Name, out.ProviderConfig)
		if err != nil {
			return out, err
		}
		out.ProviderConfig = cfg
	}
	if img := out.Machine.Image; img != nil && img.Version != nil {
		if running := b.runningImageVersion(out.Name, img.Name); running != "" {
			img.Version = ptr.To(b.notBelow(fmt.Sprintf("worker pool %s machine image %s", out.Name, img.Name), *img.Version, running))
		}
	}
	return out, nil
}

// checkControlPlanePool refuses a worker pool that hosts the shoot's own control plane:
// landscape shoots have their control plane on a seed, and Gardener refuses such a pool on them.
func checkControlPlanePool(rt *infrav1.Runtime, w *gardencorev1beta1.Worker) error {
	if w.ControlPlane == nil {
		return nil
	}
	return refused(rt, fmt.Sprintf("spec.shoot.provider.workers[%s].controlPlane", w.Name), "a runtime's control plane runs on a seed, not on its own workers")
}

// drainSettings fills the pool's unset drain settings from the landscape's, as upstream does;
// a pool's own settings win.
func drainSettings(in, landscape *gardencorev1beta1.MachineControllerManagerSettings) *gardencorev1beta1.MachineControllerManagerSettings {
	if landscape == nil {
		return in
	}
	out := in
	if out == nil {
		out = &gardencorev1beta1.MachineControllerManagerSettings{}
	}
	if out.MaxEvictRetries == nil && landscape.MaxEvictRetries != nil {
		out.MaxEvictRetries = ptr.To(*landscape.MaxEvictRetries)
	}
	if out.MachineDrainTimeout == nil && landscape.MachineDrainTimeout != nil {
		out.MachineDrainTimeout = landscape.MachineDrainTimeout.DeepCopy()
	}
	return out
}

// runningImageVersion returns the image version the current shoot's pool runs, when the pool
// exists and runs the same image; "" otherwise.
func (b *shootBuilder) runningImageVersion(pool, image string) string {
	if b.current == nil {
		return ""
	}
	for _, w := range b.current.Spec.Provider.Workers {
		if w.Name == pool && w.Machine.Image != nil && w.Machine.Image.Name == image && w.Machine.Image.Version != nil {
			return *w.Machine.Image.Version
		}
	}
	return ""
}

// machineImage fills in the default image of a pool that names none. A pool that names the
// default image without a version gets the default version; any other image without a version
// is left for Gardener to default.
func machineImage(in *gardencorev1beta1.ShootMachineImage, opts RenderOptions) *gardencorev1beta1.ShootMachineImage {
	if in == nil || in.Name == "" {
		if opts.DefaultMachineImage == "" {
			return in
		}
		return &gardencorev1beta1.ShootMachineImage{
			Name:    opts.DefaultMachineImage,
			Version: nonEmpty(opts.DefaultMachineImageVersion),
		}
	}
	if (in.Version == nil || *in.Version == "") && in.Name == opts.DefaultMachineImage {
		in.Version = nonEmpty(opts.DefaultMachineImageVersion)
	}
	return in
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

// awsWorkerConfig is the AWS WorkerConfig that requires IMDSv2 session tokens.
func awsWorkerConfig() awsWorker {
	return awsWorker{
		APIVersion: "aws.provider.extensions.gardener.cloud/v1alpha1",
		Kind:       "WorkerConfig",
		InstanceMetadataOptions: awsInstanceMetadata{
			HTTPTokens:              "required",
			HTTPPutResponseHopLimit: 2,
		},
	}
}

type awsWorker struct {
	APIVersion              string              `json:"apiVersion"`
	Kind                    string              `json:"kind"`
	InstanceMetadataOptions awsInstanceMetadata `json:"instanceMetadataOptions"`
}

type awsInstanceMetadata struct {
	HTTPTokens              string `json:"httpTokens"`
	HTTPPutResponseHopLimit int64  `json:"httpPutResponseHopLimit"`
}
