package admission_test

import (
	"errors"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
)

const ns = "garden-kyma"

// refusal is what a refused write must show.
type refusal struct {
	code    int32  // HTTP status code
	reason  string // metav1.StatusReason
	message string // exact message
}

// admissionCase is one write and its expected outcome.
type admissionCase struct {
	name     string                                     // case name
	provider string                                     // provider of the valid shoot the case starts from
	old      func(*gardencorev1beta1.Shoot)             // changes the stored shoot; nil admits a Create
	change   func(*gardencorev1beta1.Shoot)             // changes the new shoot
	env      func(*admissiontest.Env)                   // changes the environment
	want     *refusal                                   // expected refusal; nil admits
	check    func(*testing.T, *gardencorev1beta1.Shoot) // checks the admitted shoot, if set
}

func runCases(t *testing.T, cases []admissionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := admissiontest.NewEnv()
			if tc.env != nil {
				tc.env(env)
			}
			provider := tc.provider
			if provider == "" {
				provider = "aws"
			}
			req := admission.Request{Operation: admission.Create, New: admissiontest.ValidShoot(provider, "c-1", ns)}
			if tc.old != nil {
				req.Operation = admission.Update
				req.Old = admissiontest.ValidShoot(provider, "c-1", ns)
				req.Old.ResourceVersion, req.New.ResourceVersion = "7", "7"
				tc.old(req.Old)
			}
			if tc.change != nil {
				tc.change(req.New)
			}
			got, err := admission.Admit(t.Context(), env, req)
			expectOutcome(t, err, tc.want)
			if err == nil && tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

// expectOutcome compares an admission error with the expected refusal.
func expectOutcome(t *testing.T, err error, want *refusal) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error = %v (%T), want an API status", err, err)
	}
	s := status.Status()
	if s.Code != want.code || string(s.Reason) != want.reason || s.Message != want.message {
		t.Errorf("refusal = %d %q %q\nwant      %d %q %q", s.Code, s.Reason, s.Message, want.code, want.reason, want.message)
	}
}

func TestValidShootsAreAdmitted(t *testing.T) {
	for _, p := range admissiontest.Providers {
		t.Run(p, func(t *testing.T) {
			env := admissiontest.NewEnv()
			shoot := admissiontest.ValidShoot(p, "c-1", ns)
			got, err := admission.Admit(t.Context(), env, admission.Request{Operation: admission.Create, New: shoot})
			if err != nil {
				t.Fatalf("create refused: %v", err)
			}
			got.ResourceVersion = "7"
			if _, err := admission.Admit(t.Context(), env, admission.Request{Operation: admission.Update, Old: got, New: got.DeepCopy()}); err != nil {
				t.Fatalf("unchanged update refused: %v", err)
			}
		})
	}
}
