package runtime

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// TestACLCondition: a Runtime that restricts its API server is told whether the access list is
// written, and kyma-provisioning-info lists it only when it is.
func TestACLCondition(t *testing.T) {
	tests := []struct {
		name string
		// provider is the Runtime's provider type; cidrs its ACL, none for no ACL.
		provider string
		cidrs    []string
		// enabled is --api-server-acl-enabled.
		enabled bool
		// status and reason are the APIServerACL condition, status "" for none.
		status metav1.ConditionStatus
		reason string
		// listed says whether kyma-provisioning-info lists the ACL.
		listed bool
	}{
		{name: "no ACL, no condition", provider: "aws"},
		{name: "an ACL the manager writes", provider: "aws", cidrs: []string{"10.0.0.0/8"}, enabled: true, status: metav1.ConditionTrue, reason: "ACLApplied", listed: true},
		{name: "an ACL with ACLs off is not applied", provider: "aws", cidrs: []string{"10.0.0.0/8"}, status: metav1.ConditionFalse, reason: ReasonACLNotApplied},
		{name: "an ACL on a provider without the extension is not applied", provider: "gcp", cidrs: []string{"10.0.0.0/8"}, enabled: true, status: metav1.ConditionFalse, reason: ReasonACLNotApplied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			rt.Spec.Shoot.Provider.Type = tt.provider
			if tt.cidrs != nil {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: tt.cidrs}
			}

			setACLCondition(rt, tt.enabled)

			c := findCondition(rt, infrav1.ConditionAPIServerACL)
			switch {
			case tt.status == "" && c != nil:
				t.Errorf("condition %+v, want none", c)
			case tt.status != "" && (c == nil || c.Status != tt.status || c.Reason != tt.reason):
				t.Errorf("condition %+v, want %s %s", c, tt.status, tt.reason)
			}
			cm, err := provisioningInfo(rt, nil, "", tt.enabled)
			if err != nil {
				t.Fatal(err)
			}
			if listed := strings.Contains(cm.Data["details"], "kubeAPIServer:"); listed != tt.listed {
				t.Errorf("kyma-provisioning-info lists the ACL: %v, want %v\n%s", listed, tt.listed, cm.Data["details"])
			}
		})
	}
}
