package admission_test

import (
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission/admissiontest"
)

// Webhook and plugin message prefixes.
const (
	authnDenied    = `admission webhook "authentication-configuration.gardener.cloud" denied the request: `
	invalidShoot   = `Shoot.core.gardener.cloud "c-1" is invalid: `
	forbiddenShoot = `shoots.core.gardener.cloud "c-1" is forbidden: `
)

func forbidden(message string) *refusal {
	return &refusal{code: http.StatusForbidden, reason: "Forbidden", message: message}
}

// TestStructuredAuthentication covers rule 5.
func TestStructuredAuthentication(t *testing.T) {
	reference := func(s *gardencorev1beta1.Shoot) {
		s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{
			StructuredAuthentication: &gardencorev1beta1.StructuredAuthentication{ConfigMapName: "structured-auth-config-c-1"},
		}
	}
	withConfig := func(data map[string]string) func(*admissiontest.Env) {
		return func(e *admissiontest.Env) {
			e.AddConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-config-c-1", Namespace: ns}, Data: data})
		}
	}
	runCases(t, []admissionCase{
		{
			name: "ConfigMap without config.yaml", change: reference, env: withConfig(map[string]string{"other": "x"}),
			want: &refusal{code: http.StatusUnprocessableEntity, message: authnDenied +
				"error getting authentication configuration from ConfigMap garden-kyma/structured-auth-config-c-1: missing authentication configuration key in config.yaml ConfigMap data"},
		},
		{
			name: "invalid configuration", change: reference,
			env: withConfig(map[string]string{"config.yaml": "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://kyma.example\n    audiences: [kyma]\n  claimMappings:\n    username: {claim: sub, prefix: \"\"}\n"}),
			want: &refusal{code: http.StatusUnprocessableEntity, message: authnDenied +
				`provided invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://kyma.example": URL scheme must be https]`},
		},
		{
			name: "valid configuration", change: reference,
			env: func(e *admissiontest.Env) { e.AddConfigMap(admissiontest.AuthenticationConfigMap("c-1", ns)) },
		},
	})
}
