package runtime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// ProvisioningInfoName is the ConfigMap in kyma-system of every runtime cluster that tells the
// Kyma components how the runtime was provisioned, as upstream writes it; its key is "details".
const ProvisioningInfoName = "kyma-provisioning-info"

// provisioningDetails is the YAML in the ConfigMap's details key, with upstream's field names.
type provisioningDetails struct {
	WorkerPools          workerPools           `json:"workerPools"`
	GlobalAccountID      string                `json:"globalAccountID,omitempty"`
	SubaccountID         string                `json:"subaccountID,omitempty"`
	Region               string                `json:"region,omitempty"`
	InfrastructureConfig *runtime.RawExtension `json:"infrastructureConfig,omitempty"`
	NetworkDetails       networkDetails        `json:"networkDetails"`
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
	// KubeAPIServerACL lists the networks the API server admits, when the Runtime restricts it.
	KubeAPIServerACL []string `json:"kubeAPIServerACL,omitempty"`
}

// provisioningInfo returns the kyma-provisioning-info ConfigMap of rt, whose shoot is shoot. It
// lists the API server's access list only when the manager writes it: ACLs are on (aclApplied)
// and the provider has them.
func provisioningInfo(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot, aclApplied bool) (*corev1.ConfigMap, error) {
	pool := func(w infrav1.Worker) workerPool {
		return workerPool{Name: w.Name, MachineType: w.Machine.Type, HAZones: len(w.Zones) >= 3, AutoScalerMin: w.Minimum, AutoScalerMax: w.Maximum}
	}
	d := provisioningDetails{
		GlobalAccountID: rt.Labels[infrav1.LabelGlobalAccountID],
		SubaccountID:    rt.Labels[infrav1.LabelSubaccountID],
		Region:          rt.Spec.Shoot.Region,
		NetworkDetails:  networkDetails{DualStackIPEnabled: shoot != nil && shoot.Spec.Networking != nil && len(shoot.Spec.Networking.IPFamilies) > 1},
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
	if acl := rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL; acl != nil && aclApplied && gardener.NeedsACL(rt) {
		d.NetworkDetails.KubeAPIServerACL = acl.AllowedCIDRs
	}
	data, err := yaml.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ProvisioningInfoName, err)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{"details": string(data)}}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	cm.Name, cm.Namespace = ProvisioningInfoName, KymaNamespace
	cm.Labels = map[string]string{LabelManagedBy: FieldOwner}
	return cm, nil
}

// applyProvisioningInfo writes the kyma-provisioning-info ConfigMap into the runtime cluster.
func (s steps) applyProvisioningInfo(ctx context.Context, c Objects, rt *infrav1.Runtime) error {
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil {
		return err
	}
	cm, err := provisioningInfo(rt, shoot, s.ACLConfigMap.Name != "")
	if err != nil {
		return err
	}
	ac, err := applyConfiguration(cm)
	if err != nil {
		return err
	}
	current := &corev1.ConfigMap{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(cm), current); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("get %s/%s: %w", KymaNamespace, ProvisioningInfoName, err)
	default:
		if same, err := upToDate(ac, current); err == nil && same {
			// A re-check finds it as the Runtime asks: nothing to write.
			return nil
		}
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(ac), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s/%s: %w", KymaNamespace, ProvisioningInfoName, err)
	}
	return nil
}
