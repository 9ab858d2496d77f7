package admission_test

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestAccessRestrictionsAndWorkers covers shoots with access restrictions and
// SSH access disabled, and the AWS WorkerConfig.
func TestAccessRestrictionsAndWorkers(t *testing.T) {
	euAccess := func(s *gardencorev1beta1.Shoot) {
		s.Spec.AccessRestrictions = []gardencorev1beta1.AccessRestrictionWithOptions{{AccessRestriction: gardencorev1beta1.AccessRestriction{Name: "eu-access-only"}}}
	}
	workerConfig := func(config string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		}
	}
	runCases(t, []admissionCase{
		{name: "EU access in an EU region", change: euAccess},
		{name: "EU access in switzerlandnorth", provider: "azure", change: on(euAccess, func(s *gardencorev1beta1.Shoot) { s.Spec.Region = "switzerlandnorth" })},
		{name: "SSH access disabled", change: func(s *gardencorev1beta1.Shoot) {
			s.Spec.Provider.WorkersSettings = &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}}
		}},
		{name: "IMDSv2 required on AWS workers", change: workerConfig(awsWorkerIMDS2)},
	})
}
