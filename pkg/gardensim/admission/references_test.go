package admission_test

import (
	"net/http"
	"testing"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission"
	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission/admissiontest"
)

// without takes an object of the landscape away.
func without(kind, name string) func(*admissiontest.Env) {
	return func(e *admissiontest.Env) {
		if kind == "Secret" {
			delete(e.Secrets, ns+"/"+name)
		} else {
			delete(e.ConfigMaps, ns+"/"+name)
		}
	}
}

// withPolicy replaces the audit policy.
func withPolicy(data map[string]string) func(*admissiontest.Env) {
	return func(e *admissiontest.Env) {
		e.AddConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: auditPolicyCM, Namespace: ns}, Data: data})
	}
}

// TestReferences covers the audit-policies webhook of Gardener's admission
// controller.
func TestReferences(t *testing.T) {
	runCases(t, []admissionCase{
		{
			name: "a missing audit policy ConfigMap", change: landscape, env: withEnv(landscapeObjects, without("ConfigMap", auditPolicyCM)),
			want: &refusal{code: http.StatusUnprocessableEntity, message: auditDenied + `referenced audit policy ConfigMap garden-kyma/audit-policy does not exist: configmaps "audit-policy" not found`},
		},
		{
			name: "an audit policy ConfigMap without policy", change: landscape, env: withEnv(landscapeObjects, withPolicy(map[string]string{"config": validPolicy})),
			want: &refusal{code: http.StatusUnprocessableEntity, message: auditDenied + `error getting audit policy from ConfigMap garden-kyma/audit-policy: missing audit policy key in policy ConfigMap data`},
		},
		{
			name: "an invalid audit policy", change: landscape,
			env:  withEnv(landscapeObjects, withPolicy(map[string]string{"policy": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n"})),
			want: &refusal{code: http.StatusUnprocessableEntity, message: auditDenied + `provided invalid audit policy: [rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"]`},
		},
		{
			name: "an audit policy that does not decode", change: landscape,
			env:  withEnv(landscapeObjects, withPolicy(map[string]string{"policy": "apiVersion: audit.k8s.io/v2\nkind: Policy\n"})),
			want: &refusal{code: http.StatusUnprocessableEntity, message: auditDenied + `failed to decode the provided audit policy: no kind "Policy" is registered for version "audit.k8s.io/v2" in scheme "pkg/runtime/scheme.go:111"`},
		},
		{name: "every referenced object exists", change: landscape, env: landscapeObjects},
	})
}

// TestAuditPolicyConfigMapUpdate covers the audit-policies webhook on an
// update of a ConfigMap: one a shoot references must keep a valid policy.
func TestAuditPolicyConfigMapUpdate(t *testing.T) {
	shoot := admissiontest.ValidShoot("aws", "c-1", ns)
	landscape(shoot)
	internal, err := admission.InternalShoot(shoot)
	if err != nil {
		t.Fatal(err)
	}
	policy := func(name, data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"policy": data}}
	}
	tests := []struct {
		name string            // case name
		old  *corev1.ConfigMap // stored ConfigMap
		cm   *corev1.ConfigMap // updated ConfigMap
		want *refusal          // expected refusal; nil admits
	}{
		{name: "a valid policy", old: policy(auditPolicyCM, validPolicy), cm: policy(auditPolicyCM, validPolicy+"- level: None\n")},
		{
			name: "an invalid policy", old: policy(auditPolicyCM, validPolicy), cm: policy(auditPolicyCM, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: All\n"),
			want: &refusal{code: http.StatusUnprocessableEntity, message: auditDenied + `provided invalid audit policy: [rules[0].level: Unsupported value: "All": supported values: "None", "Metadata", "Request", "RequestResponse"]`},
		},
		{name: "a ConfigMap no shoot references", old: policy("other", validPolicy), cm: policy("other", "kind: nonsense")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := admission.AdmitConfigMap(tc.old, tc.cm, []*gardencore.Shoot{internal})
			expectOutcome(t, err, tc.want)
		})
	}
}
