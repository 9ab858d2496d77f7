package admission

import (
	"context"
	"fmt"
	"net/http"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	auditvalidation "k8s.io/apiserver/pkg/apis/audit/validation"
)

// AuditPolicyWebhook is the name of the gardener-admission-controller
// webhook that validates audit policies.
const AuditPolicyWebhook = "audit-policies.gardener.cloud"

// AuditPolicyKey is the ConfigMap key Gardener reads an audit policy from.
const AuditPolicyKey = "policy"

// auditPolicyDecoder decodes audit.k8s.io/v1 Policies into the internal
// version, as Gardener's webhook does.
var auditPolicyDecoder runtime.Decoder

func init() {
	scheme := runtime.NewScheme()
	builder := runtime.NewSchemeBuilder(auditv1.AddToScheme, audit.AddToScheme)
	utilruntime.Must(builder.AddToScheme(scheme))
	auditPolicyDecoder = serializer.NewCodecFactory(scheme).UniversalDecoder()
}

// auditPolicy is Gardener's audit-policies webhook for shoots
// (pkg/admissioncontroller/webhook/admission/auditpolicy): the ConfigMap
// spec.kubernetes.kubeAPIServer.auditConfig.auditPolicy.configMapRef names
// must exist in the shoot's namespace and hold, under policy, an audit
// Policy that passes kube-apiserver's validation. An update that keeps the
// ConfigMap and the Kubernetes version is not checked again.
var auditPolicy = configWebhook{
	name:          AuditPolicyWebhook,
	purpose:       "audit policy",
	key:           AuditPolicyKey,
	configMapName: auditPolicyConfigMapName,
	admit: func(raw string, _ []*gardencore.Shoot) (int32, error) {
		return admitAuditPolicy(raw)
	},
}

// auditPolicyWebhook runs the audit-policies webhook.
func (c *check) auditPolicyWebhook(ctx context.Context) error {
	return auditPolicy.admitShoot(ctx, c)
}

// admitAuditPolicy mirrors configvalidator.AdmitAuditPolicy.
func admitAuditPolicy(raw string) (int32, error) {
	obj, gvk, err := auditPolicyDecoder.Decode([]byte(raw), nil, nil)
	if err != nil {
		return http.StatusUnprocessableEntity, fmt.Errorf("failed to decode the provided audit policy: %w", err)
	}
	policy, ok := obj.(*audit.Policy)
	if !ok {
		return http.StatusInternalServerError, fmt.Errorf("failed to cast to audit policy type: %v", gvk)
	}
	if errs := auditvalidation.ValidatePolicy(policy); len(errs) != 0 {
		return http.StatusUnprocessableEntity, fmt.Errorf("provided invalid audit policy: %v", errs)
	}
	return 0, nil
}

// auditPolicyConfigMapName is the ConfigMap of the shoot's audit policy;
// empty if none.
func auditPolicyConfigMapName(api *gardencore.KubeAPIServerConfig) string {
	if api == nil || api.AuditConfig == nil || api.AuditConfig.AuditPolicy == nil || api.AuditConfig.AuditPolicy.ConfigMapRef == nil {
		return ""
	}
	return api.AuditConfig.AuditPolicy.ConfigMapRef.Name
}
