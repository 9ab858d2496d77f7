package providerwebhook_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/providerwebhook"
)

// configRefusal is the refusal of a gardener-admission-controller
// configuration validator (admission.Errored): 422 without a reason.
func configRefusal(webhook, message string) *refusal {
	return &refusal{code: http.StatusUnprocessableEntity, message: fmt.Sprintf("admission webhook %q denied the request: %s", webhook, message)}
}

// An AuthenticationConfiguration whose issuer kube-apiserver refuses.
const httpIssuerConfig = "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://kyma.example\n    audiences: [kyma]\n  claimMappings:\n    username: {claim: sub, prefix: \"\"}\n"

// An audit policy with a level kube-apiserver does not know.
const unknownLevelPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n"

// withAuthentication makes the shoot reference the ConfigMap
// structured-auth-config-<shoot>.
func withAuthentication(s *gardencorev1beta1.Shoot) {
	api := kubeAPIServer(s)
	api.StructuredAuthentication = &gardencorev1beta1.StructuredAuthentication{ConfigMapName: "structured-auth-config-" + s.Name}
}

// withAuditPolicy makes the shoot reference the audit policy ConfigMap
// audit-policy-<shoot>.
func withAuditPolicy(s *gardencorev1beta1.Shoot) {
	api := kubeAPIServer(s)
	api.AuditConfig = &gardencorev1beta1.AuditConfig{AuditPolicy: &gardencorev1beta1.AuditPolicy{
		ConfigMapRef: &corev1.ObjectReference{Name: "audit-policy-" + s.Name},
	}}
}

func kubeAPIServer(s *gardencorev1beta1.Shoot) *gardencorev1beta1.KubeAPIServerConfig {
	if s.Spec.Kubernetes.KubeAPIServer == nil {
		s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{}
	}
	return s.Spec.Kubernetes.KubeAPIServer
}

// referenced is the ConfigMap the shoot references: its structured
// authentication configuration's, else its audit policy's.
func referenced(s *gardencorev1beta1.Shoot) string {
	api := s.Spec.Kubernetes.KubeAPIServer
	if api.StructuredAuthentication != nil {
		return api.StructuredAuthentication.ConfigMapName
	}
	return api.AuditConfig.AuditPolicy.ConfigMapRef.Name
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Data: data}
}

// TestGardenerCodeDecidesReferencedConfigurations creates shoots that
// reference a structured authentication configuration or an audit policy by
// ConfigMap: Gardener's admission controller, its own code, decides them
// with its own messages.
func TestGardenerCodeDecidesReferencedConfigurations(t *testing.T) {
	cases := []struct {
		name      string                         // what the shoot references
		reference func(*gardencorev1beta1.Shoot) // makes the shoot reference its ConfigMap
		data      map[string]string              // the ConfigMap's data; nil for no ConfigMap
		want      *refusal                       // nil for an admitted shoot
	}{
		{name: "a valid authentication configuration", reference: withAuthentication, data: map[string]string{"config.yaml": admissiontest.ValidAuthenticationConfig}},
		{
			name: "an authentication ConfigMap without config.yaml", reference: withAuthentication, data: map[string]string{"other": "x"},
			want: configRefusal(providerwebhook.AuthenticationWebhook,
				"error getting authentication configuration from ConfigMap garden-test/structured-auth-config-{shoot}: missing authentication configuration key in config.yaml ConfigMap data"),
		},
		{
			name: "an authentication configuration with an http issuer", reference: withAuthentication, data: map[string]string{"config.yaml": httpIssuerConfig},
			want: configRefusal(providerwebhook.AuthenticationWebhook,
				`provided invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://kyma.example": URL scheme must be https]`),
		},
		{
			// gardener-apiserver's reference manager refuses it before any webhook.
			name: "a missing authentication ConfigMap", reference: withAuthentication,
			want: &refusal{code: http.StatusForbidden, reason: metav1.StatusReasonForbidden,
				message: `shoots.core.gardener.cloud "{shoot}" is forbidden: failed to resolve structured authentication config map reference: configmaps "structured-auth-config-{shoot}" not found`},
		},
		{name: "a valid audit policy", reference: withAuditPolicy, data: map[string]string{"policy": admissiontest.ValidAuditPolicy}},
		{
			name: "an audit policy with an unknown level", reference: withAuditPolicy, data: map[string]string{"policy": unknownLevelPolicy},
			want: configRefusal(providerwebhook.AuditPolicyWebhook,
				`provided invalid audit policy: [rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"]`),
		},
		{
			name: "a missing audit policy ConfigMap", reference: withAuditPolicy,
			want: configRefusal(providerwebhook.AuditPolicyWebhook,
				`referenced audit policy ConfigMap garden-test/audit-policy-{shoot} does not exist: configmaps "audit-policy-{shoot}" not found`),
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shoot := admissiontest.ValidShoot("aws", fmt.Sprintf("cfg-%d", i), namespace)
			tc.reference(shoot)
			if tc.data != nil {
				if err := gardenClient.Create(t.Context(), configMap(referenced(shoot), tc.data)); err != nil {
					t.Fatal(err)
				}
			}
			err := gardenClient.Create(t.Context(), shoot)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			assertDenied(t, err, withShoot(tc.want, shoot.Name))
		})
	}
}

// TestGardenerCodeDecidesConfigMapUpdates: a ConfigMap a shoot references
// keeps a valid configuration; one no shoot references may hold anything.
func TestGardenerCodeDecidesConfigMapUpdates(t *testing.T) {
	shoot := admissiontest.ValidShoot("aws", "cfg-update", namespace)
	withAuthentication(shoot)
	withAuditPolicy(shoot)
	auth := configMap("structured-auth-config-cfg-update", map[string]string{"config.yaml": admissiontest.ValidAuthenticationConfig})
	policy := configMap("audit-policy-cfg-update", map[string]string{"policy": admissiontest.ValidAuditPolicy})
	unreferenced := configMap("not-referenced", map[string]string{"config.yaml": admissiontest.ValidAuthenticationConfig})
	for _, obj := range []client.Object{auth, policy, unreferenced, shoot} {
		if err := gardenClient.Create(t.Context(), obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}

	auth.Data["config.yaml"] = httpIssuerConfig
	assertDenied(t, gardenClient.Update(t.Context(), auth), configRefusal(providerwebhook.AuthenticationWebhook,
		`provided invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://kyma.example": URL scheme must be https]`))

	policy.Data["policy"] = unknownLevelPolicy
	assertDenied(t, gardenClient.Update(t.Context(), policy), configRefusal(providerwebhook.AuditPolicyWebhook,
		`provided invalid audit policy: [rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"]`))

	unreferenced.Data["config.yaml"] = httpIssuerConfig
	if err := gardenClient.Update(t.Context(), unreferenced); err != nil {
		t.Errorf("an unreferenced ConfigMap's update was refused: %v", err)
	}
}

// olderVersion is a version of every profile older than the valid shoots'
// admissiontest.KubernetesVersion, and of the same minor: an upgrade to
// 1.34 would be refused for the shoot's secret binding.
const olderVersion = "1.33.2"

// TestGardenerCodeDoesNotRecheckUnchangedReferences deletes the audit policy
// a stored shoot references: an update that keeps the reference and the
// Kubernetes version is admitted, an upgrade is refused.
func TestGardenerCodeDoesNotRecheckUnchangedReferences(t *testing.T) {
	shoot := admissiontest.ValidShoot("aws", "cfg-recheck", namespace)
	shoot.Spec.Kubernetes.Version = olderVersion
	withAuditPolicy(shoot)
	policy := configMap("audit-policy-cfg-recheck", map[string]string{"policy": admissiontest.ValidAuditPolicy})
	for _, obj := range []client.Object{policy, shoot} {
		if err := gardenClient.Create(t.Context(), obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
	if err := gardenClient.Delete(t.Context(), policy); err != nil {
		t.Fatal(err)
	}
	shoot.Spec.Provider.Workers[0].Maximum++
	if err := gardenClient.Update(t.Context(), shoot); err != nil {
		t.Fatalf("an update keeping the reference was refused: %v", err)
	}
	shoot.Spec.Kubernetes.Version = admissiontest.KubernetesVersion
	assertDenied(t, gardenClient.Update(t.Context(), shoot), configRefusal(providerwebhook.AuditPolicyWebhook,
		`referenced audit policy ConfigMap garden-test/audit-policy-cfg-recheck does not exist: configmaps "audit-policy-cfg-recheck" not found`))
}

// withShoot is want with {shoot} replaced by the shoot's name.
func withShoot(want *refusal, shoot string) *refusal {
	out := *want
	out.message = strings.ReplaceAll(out.message, "{shoot}", shoot)
	return &out
}
