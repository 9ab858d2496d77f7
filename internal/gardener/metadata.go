package gardener

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// Annotations and labels the render sets on a Shoot.
const (
	// AnnotationRuntimeID carries the runtime ID on the Shoot, so a Shoot can be traced back to
	// its Runtime without parsing labels.
	AnnotationRuntimeID = "infrastructuremanager.kyma-project.io/runtime-id"
	// AnnotationLicenceType carries the Runtime's licence type, when it has one.
	AnnotationLicenceType = "infrastructuremanager.kyma-project.io/licence-type"
	// LabelAccount carries the global account id on the Shoot, as upstream (and the provisioner
	// before it) label shoots.
	LabelAccount = "account"
	// LabelSubaccount carries the subaccount id on the Shoot, as upstream labels shoots.
	LabelSubaccount = "subaccount"
)

// copiedLabels are the Runtime labels that are copied onto its Shoot.
var copiedLabels = []string{
	infrav1.LabelRuntimeID,
	infrav1.LabelInstanceID,
	infrav1.LabelGlobalAccountID,
	infrav1.LabelSubaccountID,
	infrav1.LabelShootName,
	infrav1.LabelRegion,
	infrav1.LabelBrokerPlanID,
	infrav1.LabelBrokerPlanName,
}

// accountLabels maps the Shoot's account labels to the Runtime labels they are copied from.
var accountLabels = map[string]string{
	LabelAccount:    infrav1.LabelGlobalAccountID,
	LabelSubaccount: infrav1.LabelSubaccountID,
}

// cleanupGracePeriods are the annotations with which upstream shortens the grace periods of
// Gardener's cleanup of a deleted shoot's webhooks, extended APIs and Kubernetes resources,
// in seconds.
var cleanupGracePeriods = map[string]string{
	"shoot.gardener.cloud/cleanup-webhooks-finalize-grace-period-seconds":             "60",
	"shoot.gardener.cloud/cleanup-extended-apis-finalize-grace-period-seconds":        "120",
	"shoot.gardener.cloud/cleanup-kubernetes-resources-finalize-grace-period-seconds": "120",
}

// objectMeta names the Shoot and copies the Runtime's identity into labels and annotations.
func objectMeta(rt *infrav1.Runtime, opts RenderOptions) metav1.ObjectMeta {
	labels := maps.Clone(opts.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, key := range copiedLabels {
		if value, ok := rt.Labels[key]; ok {
			labels[key] = value
		}
	}
	for shootLabel, runtimeLabel := range accountLabels {
		if value, ok := rt.Labels[runtimeLabel]; ok {
			labels[shootLabel] = value
		}
	}
	annotations := maps.Clone(cleanupGracePeriods)
	if id, ok := rt.Labels[infrav1.LabelRuntimeID]; ok {
		annotations[AnnotationRuntimeID] = id
	}
	if lt := rt.Spec.Shoot.LicenceType; lt != nil && *lt != "" {
		annotations[AnnotationLicenceType] = *lt
	}
	return metav1.ObjectMeta{
		Name:        rt.Spec.Shoot.Name,
		Namespace:   opts.Namespace,
		Labels:      emptyToNil(labels),
		Annotations: emptyToNil(annotations),
	}
}
