package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	goyaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// ProvisioningInfoName is the ConfigMap in kyma-system of every runtime cluster that tells the
// Kyma components how the runtime was provisioned, as upstream writes it; its key is "details".
const ProvisioningInfoName = "kyma-provisioning-info"

// provisioningDetails is the YAML in the ConfigMap's details key, with upstream's keys and the
// values upstream takes for them (its skrdetails package): the identity from the Runtime's
// labels, the regions from its spec and from the shoot's seed, lastReconcileTime from the
// shoot's last operation as the Runtime's status mirrors it. Empty values are left out, as
// upstream leaves them out, so a ConfigMap upstream wrote for a runtime reads the same here and a
// takeover rewrites none.
type provisioningDetails struct {
	WorkerPools           workerPools           `json:"workerPools"`
	GlobalAccountID       string                `json:"globalAccountID,omitempty"`
	SubaccountID          string                `json:"subaccountID,omitempty"`
	EnvironmentInstanceID string                `json:"environmentInstanceID,omitempty"`
	InstanceID            string                `json:"instanceID,omitempty"`
	RuntimeID             string                `json:"runtimeID,omitempty"`
	InstanceName          string                `json:"instanceName,omitempty"`
	Region                string                `json:"region,omitempty"`
	PlatformRegion        string                `json:"platformRegion,omitempty"`
	SeedRegion            string                `json:"seedRegion,omitempty"`
	LastReconcileTime     *metav1.Time          `json:"lastReconcileTime,omitempty"`
	InfrastructureConfig  *runtime.RawExtension `json:"infrastructureConfig,omitempty"`
	NetworkDetails        networkDetails        `json:"networkDetails"`
}

type workerPools struct {
	Kyma   workerPool   `json:"kyma"`
	Custom []workerPool `json:"custom,omitempty"`
}

type workerPool struct {
	Name          string `json:"name"`
	MachineType   string `json:"machineType"`
	HAZones       bool   `json:"haZones"`
	AutoScalerMin int32  `json:"autoScalerMin"`
	AutoScalerMax int32  `json:"autoScalerMax"`
}

type networkDetails struct {
	DualStackIPEnabled bool `json:"dualStackIPEnabled"`
	// KubeAPIServer lists the networks the API server admits, when the Runtime restricts it.
	KubeAPIServer *kubeAPIServerDetails `json:"kubeAPIServer,omitempty"`
}

type kubeAPIServerDetails struct {
	ACL []string `json:"acl,omitempty"`
}

// provisioningInfo returns the kyma-provisioning-info ConfigMap of rt, whose shoot is shoot and
// whose shoot's seed is in seedRegion ("" when not known). It lists the API server's access
// list only when the manager writes it: ACLs are on (aclApplied) and the provider has them.
func provisioningInfo(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, seedRegion string, aclApplied bool) (*corev1.ConfigMap, error) {
	pool := func(w infrav1.Worker) workerPool {
		return workerPool{Name: w.Name, MachineType: w.Machine.Type, HAZones: len(w.Zones) >= 3, AutoScalerMin: w.Minimum, AutoScalerMax: w.Maximum}
	}
	d := provisioningDetails{
		GlobalAccountID:       rt.Labels[infrav1.LabelGlobalAccountID],
		SubaccountID:          rt.Labels[infrav1.LabelSubaccountID],
		EnvironmentInstanceID: rt.Labels[infrav1.LabelInstanceID],
		InstanceID:            rt.Labels[infrav1.LabelInstanceID],
		RuntimeID:             rt.Labels[infrav1.LabelRuntimeID],
		InstanceName:          rt.Labels[infrav1.LabelKymaName],
		Region:                rt.Spec.Shoot.Region,
		PlatformRegion:        rt.Spec.Shoot.PlatformRegion,
		SeedRegion:            seedRegion,
		NetworkDetails:        networkDetails{DualStackIPEnabled: shoot != nil && shoot.Spec.Networking != nil && len(shoot.Spec.Networking.IPFamilies) > 1},
	}
	if op := rt.Status.ShootLastOperation; op != nil && !op.LastUpdateTime.IsZero() {
		at := metav1.NewTime(op.LastUpdateTime.UTC())
		d.LastReconcileTime = &at
	}
	if workers := rt.Spec.Shoot.Provider.Workers; len(workers) > 0 {
		d.WorkerPools.Kyma = pool(workers[0])
	}
	if extra := rt.Spec.Shoot.Provider.AdditionalWorkers; extra != nil {
		for _, w := range *extra {
			d.WorkerPools.Custom = append(d.WorkerPools.Custom, pool(w))
		}
	}
	if shoot != nil {
		d.InfrastructureConfig = shoot.Spec.Provider.InfrastructureConfig
	}
	if acl := rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL; acl != nil && len(acl.AllowedCIDRs) > 0 && aclApplied && gardener.NeedsACL(rt) {
		d.NetworkDetails.KubeAPIServer = &kubeAPIServerDetails{ACL: acl.AllowedCIDRs}
	}
	data, err := detailsYAML(d)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ProvisioningInfoName, err)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{"details": string(data)}}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	cm.Name, cm.Namespace = ProvisioningInfoName, KymaNamespace
	cm.Labels = map[string]string{LabelManagedBy: FieldOwner}
	return cm, nil
}

// detailsYAML encodes d as sigs.k8s.io/yaml's Marshal does, byte for byte: d's JSON, decoded
// into plain values, encoded as YAML with sorted keys. Marshal decodes that JSON with the YAML
// parser, which tells integers from floats; the parse allocated a fifth of all the bytes of a
// quiet fleet's re-checks while they rendered the provisioning info (the benchmark's P4 at 1,000
// Runtimes sharing one cluster). Here the JSON decoder keeps each number as written, and
// yamlNumber gives it the type the YAML parser would.
func detailsYAML(d provisioningDetails) ([]byte, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode the details as JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("decode the details' JSON: %w", err)
	}
	out, err := goyaml.Marshal(yamlNumbers(tree))
	if err != nil {
		return nil, fmt.Errorf("encode the details as YAML: %w", err)
	}
	return out, nil
}

// yamlNumbers replaces the numbers in v, decoded JSON, by the values the YAML parser resolves
// them to, and returns v.
func yamlNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = yamlNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = yamlNumbers(e)
		}
	case json.Number:
		return yamlNumber(string(t))
	}
	return v
}

// yamlNumber is the value go-yaml's resolver gives the plain scalar n, a JSON number: an int
// when it fits one, else an int64 or a uint64, else a float64; the text itself when it is out of
// range even as a float.
func yamlNumber(n string) any {
	if i, err := strconv.ParseInt(n, 0, 64); err == nil {
		if i == int64(int(i)) {
			return int(i)
		}
		return i
	}
	if u, err := strconv.ParseUint(n, 0, 64); err == nil {
		return u
	}
	if f, err := strconv.ParseFloat(n, 64); err == nil {
		return f
	}
	return n
}

// seedRegion is the region of the seed the shoot is scheduled on, as upstream writes it into
// the provisioning info: "" while the shoot has no seed. The seed is read once per seed name.
func (s steps) seedRegion(ctx context.Context, shoot *gardencorev1beta1.Shoot) (string, error) {
	if shoot == nil || shoot.Spec.SeedName == nil || *shoot.Spec.SeedName == "" {
		return "", nil
	}
	name := *shoot.Spec.SeedName
	if s.seedRegions != nil {
		if region, ok := s.seedRegions.Load(name); ok {
			return region.(string), nil
		}
	}
	seed := &gardencorev1beta1.Seed{}
	if err := s.Garden.Get(ctx, client.ObjectKey{Name: name}, seed); err != nil {
		return "", fmt.Errorf("get seed %s of shoot %s: %w", name, shoot.Name, err)
	}
	if s.seedRegions != nil {
		s.seedRegions.Store(name, seed.Spec.Provider.Region)
	}
	return seed.Spec.Provider.Region, nil
}

// readProvisioningInfo reads the runtime cluster's kyma-provisioning-info ConfigMap; nil when
// it does not exist (nor, perhaps, its namespace).
func readProvisioningInfo(ctx context.Context, c Objects) (*corev1.ConfigMap, error) {
	current := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: KymaNamespace, Name: ProvisioningInfoName}, current)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get %s/%s: %w", KymaNamespace, ProvisioningInfoName, err)
	}
	return current, nil
}

// applyProvisioningInfo writes the kyma-provisioning-info ConfigMap into the runtime cluster,
// unless current (nil: none) already says what it would write. While the Runtime, its shoot,
// current and the seed's region are those it last found current as asked on, it does not
// render it again.
func (s steps) applyProvisioningInfo(ctx context.Context, c Objects, rt *infrav1.Runtime, current *corev1.ConfigMap) error {
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil {
		return err
	}
	region, err := s.seedRegion(ctx, shoot)
	if err != nil {
		return err
	}
	aclApplied := s.ACLConfigMap.Name != ""
	on := ""
	if current != nil && shoot != nil {
		on = versionsOf(rt, []client.Object{shoot, current}, region, strconv.FormatBool(aclApplied))
	}
	if s.verdicts.holds(verdictProvisioningInfo, rt, on) {
		// Nothing it is made of changed since this process found it as the Runtime asks: no
		// render (verdicts).
		return nil
	}
	cm, err := provisioningInfo(rt, shoot, region, aclApplied)
	if err != nil {
		return err
	}
	ac, err := applyConfiguration(cm)
	if err != nil {
		return err
	}
	if current != nil {
		if same, err := upToDate(ac, current); err == nil && same {
			// A re-check finds it as the Runtime asks: nothing to write.
			s.verdicts.found(verdictProvisioningInfo, rt, on)
			return nil
		}
		if current.Labels[LabelUpstreamReconcilerManagedBy] == upstreamManager && maps.Equal(current.Data, cm.Data) {
			// Upstream's, with the details the Runtime asks for: a takeover leaves it as it is.
			s.verdicts.found(verdictProvisioningInfo, rt, on)
			return nil
		}
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(ac), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s/%s: %w", KymaNamespace, ProvisioningInfoName, err)
	}
	return nil
}
