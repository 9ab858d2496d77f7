package v1_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// upstreamStatus is the status upstream's manager writes on a Ready Runtime: its state, its
// condition types and reasons, provisioningCompleted and the shoot's last operation and errors.
const upstreamStatus = `{
  "state": "Ready",
  "provisioningCompleted": true,
  "shootLastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100, "description": "Shoot cluster has been successfully reconciled.", "lastUpdateTime": "2026-01-01T00:04:00Z"},
  "shootLastErrors": [{"description": "quota exceeded", "taskID": "deploy-infrastructure", "codes": ["ERR_INFRA_QUOTA_EXCEEDED"], "lastUpdateTime": "2026-01-01T00:00:30Z"}],
  "conditions": [
    {"type": "Provisioned", "status": "True", "reason": "Processing", "message": "Shoot creation completed", "lastTransitionTime": "2026-01-01T00:00:00Z"},
    {"type": "KubeconfigReady", "status": "True", "reason": "GardenerClusterCRReady", "message": "Gardener Cluster CR is ready.", "lastTransitionTime": "2026-01-01T00:01:00Z"},
    {"type": "OidcAndConfigMapConfigured", "status": "True", "reason": "OidcConfigured", "message": "OIDC configuration completed", "lastTransitionTime": "2026-01-01T00:02:00Z"},
    {"type": "KymaSystemNSCreated", "status": "True", "reason": "KymaSystemCreated", "message": "kyma-system namespace created", "lastTransitionTime": "2026-01-01T00:02:00Z"},
    {"type": "RuntimeConfigured", "status": "True", "reason": "ConfigurationCompleted", "message": "Runtime processing completed successfully", "lastTransitionTime": "2026-01-01T00:03:00Z"}
  ]
}`

// TestUpstreamStatusIsKept writes the status upstream leaves on a Runtime through the API
// server and reads it back: it decodes into this API and nothing of it is pruned.
func TestUpstreamStatusIsKept(t *testing.T) {
	objs, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := c.Scheme().Convert(objs[0], rt, nil); err != nil {
		t.Fatal(err)
	}
	rt.Name = "upstream-status"
	if err := c.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	var want infrav1.RuntimeStatus
	if err := json.Unmarshal([]byte(upstreamStatus), &want); err != nil {
		t.Fatalf("upstream's status does not decode: %v", err)
	}
	rt.Status = want
	if err := c.Status().Update(t.Context(), rt); err != nil {
		t.Fatalf("the API server refuses upstream's status: %v", err)
	}
	got := &infrav1.Runtime{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(rt), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.State != infrav1.StateReady || !got.Status.ProvisioningCompleted || len(got.Status.Conditions) != len(want.Conditions) {
		t.Fatalf("status read back = %+v, want upstream's", got.Status)
	}
	if op := got.Status.ShootLastOperation; op == nil || op.State != "Succeeded" || op.Progress != 100 || op.Description == "" {
		t.Errorf("shootLastOperation = %+v, want upstream's", op)
	}
	if errs := got.Status.ShootLastErrors; len(errs) != 1 || ptrString(errs[0].TaskID) != "deploy-infrastructure" || len(errs[0].Codes) != 1 || errs[0].LastUpdateTime == nil {
		t.Errorf("shootLastErrors = %+v, want upstream's", errs)
	}
	for _, w := range want.Conditions {
		g := meta.FindStatusCondition(got.Status.Conditions, w.Type)
		if g == nil || g.Status != w.Status || g.Reason != w.Reason || g.Message != w.Message || !g.LastTransitionTime.Equal(&w.LastTransitionTime) {
			t.Errorf("condition %s = %+v, want %+v", w.Type, g, w)
		}
	}
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
