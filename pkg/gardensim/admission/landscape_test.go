package admission_test

import (
	"net/http"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission"
	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/admission/admissiontest"
)

// TestLandscapeShootIsAdmitted admits a shoot with everything a landscape's
// configuration adds, and an unchanged update of it.
func TestLandscapeShootIsAdmitted(t *testing.T) {
	runCases(t, []admissionCase{
		{name: "create", change: landscape, env: landscapeObjects},
		{name: "unchanged update", old: landscape, change: landscape, env: landscapeObjects},
	})
}

// TestUnchangedReferencesAreNotRechecked stores a landscape's shoot, then
// takes away what it references, as Gardener's plugins and webhooks allow:
// an update that leaves the reference alone is admitted, one that changes
// it is refused.
func TestUnchangedReferencesAreNotRechecked(t *testing.T) {
	tests := []struct {
		name   string                         // case name
		remove func(*admissiontest.Env)       // takes the referenced object away
		change func(*gardencorev1beta1.Shoot) // changes the reference; nil keeps it
		want   *refusal                       // expected refusal of the update
	}{
		{name: "a deleted audit policy", remove: func(e *admissiontest.Env) { delete(e.ConfigMaps, ns+"/"+auditPolicyCM) }},
		{
			name: "a deleted audit policy on a Kubernetes upgrade", remove: func(e *admissiontest.Env) { delete(e.ConfigMaps, ns+"/"+auditPolicyCM) },
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.34.1" },
			want: &refusal{code: http.StatusUnprocessableEntity, message: auditDenied +
				`referenced audit policy ConfigMap garden-kyma/audit-policy does not exist: configmaps "audit-policy" not found`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := admissiontest.NewEnv()
			landscapeObjects(env)
			shoot := admissiontest.ValidShoot("aws", "c-1", ns)
			shoot.Spec.CredentialsBindingName, shoot.Spec.SecretBindingName = ptr.To("cb-aws"), nil //nolint:staticcheck // SA1019: the deprecated binding Kubernetes 1.34 forbids.
			landscape(shoot)
			stored, err := admission.Admit(t.Context(), env, admission.Request{Operation: admission.Create, New: shoot})
			if err != nil {
				t.Fatalf("create refused: %v", err)
			}
			stored.ResourceVersion = "7"
			tc.remove(env)
			update := stored.DeepCopy()
			if tc.change != nil {
				tc.change(update)
			}
			_, err = admission.Admit(t.Context(), env, admission.Request{Operation: admission.Update, Old: stored, New: update})
			expectOutcome(t, err, tc.want)
		})
	}
}
