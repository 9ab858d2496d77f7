package gardenercluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// holder returns the Runtime that holds gc, or says why none does. A GardenerCluster asks the
// manager for the admin kubeconfig of a shoot, so it is served only for the Runtime it belongs
// to, never for whoever created it:
//
//   - the Runtime is the one named by gc's runtime-name label (this manager's GardenerClusters),
//     or the one of gc's runtime id that names gc's shoot (upstream's, until the Runtime
//     controller labels them);
//   - its runtime id is gc's name and gc's runtime-id label;
//   - its shoot is gc's shoot;
//   - gc's Secret is kubeconfig-<runtime id>, where the Runtime reads it.
func (k kubeconfigs) holder(ctx context.Context, gc *infrav1.GardenerCluster) (*infrav1.Runtime, string, error) {
	rt, err := k.candidate(ctx, gc)
	if err != nil || rt == nil {
		return nil, "no Runtime of runtime id " + gc.Name + " names shoot " + gc.Spec.Shoot.Name, err
	}
	id := rt.Labels[infrav1.LabelRuntimeID]
	switch {
	case id != gc.Name:
		return nil, fmt.Sprintf("Runtime %s has runtime id %s, not %s", rt.Name, id, gc.Name), nil
	case gc.Labels[infrav1.LabelRuntimeID] != "" && gc.Labels[infrav1.LabelRuntimeID] != id:
		return nil, fmt.Sprintf("label %s is %s, not the runtime id %s", infrav1.LabelRuntimeID, gc.Labels[infrav1.LabelRuntimeID], id), nil
	case rt.Spec.Shoot.Name != gc.Spec.Shoot.Name:
		return nil, fmt.Sprintf("Runtime %s names shoot %s, not %s", rt.Name, rt.Spec.Shoot.Name, gc.Spec.Shoot.Name), nil
	case gc.Spec.Kubeconfig.Secret.Name != SecretName(id):
		return nil, fmt.Sprintf("the Secret is %s, not %s", gc.Spec.Kubeconfig.Secret.Name, SecretName(id)), nil
	}
	return rt, "", nil
}

// candidate returns the Runtime gc may belong to, nil when there is none.
func (k kubeconfigs) candidate(ctx context.Context, gc *infrav1.GardenerCluster) (*infrav1.Runtime, error) {
	if name, ok := gc.Labels[infrav1.LabelRuntimeName]; ok {
		rt := &infrav1.Runtime{}
		err := k.Client.Get(ctx, client.ObjectKey{Namespace: gc.Namespace, Name: name}, rt)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get Runtime %s: %w", name, err)
		}
		return rt, nil
	}
	// The Kyma Environment Broker names a Runtime after its runtime id, as the GardenerCluster:
	// that one is read by name. A List by label reads every Runtime of the namespace, and the
	// cache builds a map of the labels of each (it keeps them as pairs: the StoredRuntime of
	// internal/controller/runtime).
	named := &infrav1.Runtime{}
	err := k.Client.Get(ctx, client.ObjectKey{Namespace: gc.Namespace, Name: gc.Name}, named)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("get Runtime %s: %w", gc.Name, err)
	case named.Labels[infrav1.LabelRuntimeID] == gc.Name && named.Spec.Shoot.Name == gc.Spec.Shoot.Name:
		return named, nil
	}
	list := &infrav1.RuntimeList{}
	if err := k.Client.List(ctx, list, client.InNamespace(gc.Namespace), client.MatchingLabels{infrav1.LabelRuntimeID: gc.Name}); err != nil {
		return nil, fmt.Errorf("list the Runtimes of runtime id %s: %w", gc.Name, err)
	}
	for i := range list.Items {
		if list.Items[i].Spec.Shoot.Name == gc.Spec.Shoot.Name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// SecretName is the name of the kubeconfig Secret of runtime id, as upstream names it.
func SecretName(runtimeID string) string { return "kubeconfig-" + runtimeID }

// runtimeLabels are the labels a kubeconfig Secret takes from its Runtime, the ones upstream's
// Secrets carry and other components find kubeconfigs by.
var runtimeLabels = []string{
	infrav1.LabelInstanceID, infrav1.LabelRuntimeID, infrav1.LabelBrokerPlanID, infrav1.LabelBrokerPlanName,
	infrav1.LabelGlobalAccountID, infrav1.LabelSubaccountID, infrav1.LabelKymaName,
}

// secretLabels are the labels of the kubeconfig Secret of gc, held by rt: a fixed list, with
// values from the Runtime and not from the GardenerCluster, so no label reaches the Secret
// that its Runtime does not carry.
func secretLabels(gc *infrav1.GardenerCluster, rt *infrav1.Runtime) map[string]string {
	labels := map[string]string{
		infrav1.LabelShootName:      rt.Spec.Shoot.Name,
		infrav1.LabelRegion:         rt.Spec.Shoot.Region,
		infrav1.LabelKymaManagedBy:  ManagedBy,
		infrav1.LabelKymaInternal:   "true",
		infrav1.LabelClusterName:    gc.Name,
		infrav1.LabelRuntimeName:    rt.Name,
		infrav1.LabelPlatformRegion: rt.Spec.Shoot.PlatformRegion,
	}
	for _, l := range runtimeLabels {
		if v, ok := rt.Labels[l]; ok {
			labels[l] = v
		}
	}
	if labels[infrav1.LabelPlatformRegion] == "" {
		delete(labels, infrav1.LabelPlatformRegion)
	}
	return labels
}
