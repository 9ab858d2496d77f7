package lifecycle

import (
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var testIdentity = identity{gardener: gardencorev1beta1.Gardener{ID: "sim", Name: "sim", Version: "v1"}}

func TestStartOperation(t *testing.T) {
	s := shootWith("", "", 3, 0)
	s.UID = types.UID("u-1")
	s.Spec.SeedName = ptr.To("seed-1")
	startOperation(s, create, metav1.NewTime(now), testIdentity)
	st := s.Status
	if st.TechnicalID != "shoot--p--s" || st.UID != "u-1" || st.ObservedGeneration != 3 || *st.SeedName != "seed-1" || st.Gardener.ID != "sim" {
		t.Errorf("status = %+v", st)
	}
	if st.LastOperation.State != processing || st.LastOperation.Progress != 0 || st.RetryCycleStartTime == nil {
		t.Errorf("lastOperation = %+v", st.LastOperation)
	}
	if len(st.Conditions) != 4 || st.Conditions[0].Status != gardencorev1beta1.ConditionUnknown {
		t.Errorf("conditions = %+v", st.Conditions)
	}
}

func TestEndOperation(t *testing.T) {
	quota := Verdict{Outcome: OutcomeFailed, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}}
	transient := Verdict{Outcome: OutcomeError, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorRetryableInfraDependencies}}
	tests := []struct {
		name        string                               // case name
		end         func(*gardencorev1beta1.Shoot)       // how the operation ends
		wantState   gardencorev1beta1.LastOperationState // resulting state
		wantCode    gardencorev1beta1.ErrorCode          // code in lastErrors, if any
		description string                               // part of the description
	}{
		{
			name:      "success clears errors and sets conditions",
			end:       func(s *gardencorev1beta1.Shoot) { succeedOperation(s, metav1.NewTime(now)) },
			wantState: succeeded, description: "successfully reconciled",
		},
		{
			name:      "failure carries the code and the provider message",
			end:       func(s *gardencorev1beta1.Shoot) { failOperation(s, quota, metav1.NewTime(now)) },
			wantState: failed, wantCode: gardencorev1beta1.ErrorInfraQuotaExceeded, description: "QuotaExceeded",
		},
		{
			name:      "error announces the retry",
			end:       func(s *gardencorev1beta1.Shoot) { failOperation(s, transient, metav1.NewTime(now)) },
			wantState: errored, wantCode: gardencorev1beta1.ErrorRetryableInfraDependencies, description: "Operation will be retried.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := shootWith("", "", 1, 0)
			startOperation(s, create, metav1.NewTime(now), testIdentity)
			progressOperation(s, 30, metav1.NewTime(now))
			tc.end(s)
			last := s.Status.LastOperation
			if last.State != tc.wantState || !strings.Contains(last.Description, tc.description) {
				t.Errorf("lastOperation = %+v", last)
			}
			if tc.wantCode == "" {
				if len(s.Status.LastErrors) != 0 || s.Status.Conditions[0].Status != gardencorev1beta1.ConditionTrue || last.Progress != 100 {
					t.Errorf("status after success = %+v", s.Status)
				}
				return
			}
			errs := s.Status.LastErrors
			if len(errs) != 1 || errs[0].Codes[0] != tc.wantCode || last.Progress != 30 || *errs[0].TaskID == "" {
				t.Errorf("lastErrors = %+v, progress %d", errs, last.Progress)
			}
		})
	}
}
