package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// admissionTimeout bounds the wait for the admission policies.
const admissionTimeout = 30 * time.Second

// waitForAdmission returns once the API server refuses a Runtime without the labels that the
// policy of config/admission requires: a policy is in force only once the API server has
// loaded and type-checked it, a while after it was created. The probe is otherwise valid, so
// that only the policy can refuse it, and it is created as a dry run, so that it is never
// stored.
func (cp *ControlPlane) waitForAdmission(ctx context.Context) error {
	probe := &infrav1.Runtime{Spec: infrav1.RuntimeSpec{
		Shoot: infrav1.RuntimeShoot{
			Name: "probe", Purpose: "evaluation", PlatformRegion: "local", Region: "local", SecretBindingName: "probe",
			Provider: infrav1.Provider{Type: "aws", Workers: []infrav1.Worker{{
				Name: "probe", Machine: infrav1.Machine{Type: "probe"}, Maximum: 1, Zones: []string{"probe"},
			}}},
			Networking: infrav1.Networking{Pods: "10.0.0.0/16", Nodes: "10.1.0.0/16", Services: "10.2.0.0/16"},
		},
		Security: infrav1.Security{Administrators: []string{"probe@example.com"}},
	}}
	probe.Name, probe.Namespace = "admission-probe", metav1.NamespaceDefault
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, admissionTimeout, true, func(ctx context.Context) (bool, error) {
		err := cp.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if apierrors.IsInvalid(err) {
			return true, nil
		}
		if err == nil {
			err = errors.New("a Runtime without labels was accepted")
		}
		last = err
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("not in force after %s: %w", admissionTimeout, errors.Join(err, last))
	}
	return nil
}
