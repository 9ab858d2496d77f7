package gardensim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
)

// TestOutageThroughAdminAPI starts and ends a Gardener outage at run time
// through the admin HTTP API, as a demo or an end-to-end test would.
func TestOutageThroughAdminAPI(t *testing.T) {
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	list := func(ctx context.Context) error {
		return garden.List(ctx, &gardencorev1beta1.ShootList{}, client.InNamespace(namespace))
	}

	adminCall(t, http.MethodPut, "/rules", `[{"name":"outage","fault":{"type":"Status","code":503}}]`, http.StatusOK)
	if err := list(t.Context()); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("list during the outage = %v, want ServiceUnavailable", err)
	}
	var rules []fault.RuleStatus
	if err := json.Unmarshal([]byte(adminCall(t, http.MethodGet, "/rules", "", http.StatusOK)), &rules); err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Name != "outage" || rules[0].Hits == 0 || !rules[0].Active {
		t.Errorf("rules = %+v, want the active outage rule with hits", rules)
	}

	adminCall(t, http.MethodDelete, "/rules", "", http.StatusNoContent)
	if err := list(t.Context()); err != nil {
		t.Fatalf("list after the outage = %v", err)
	}

	t.Run("a bounded outage ends by itself", func(t *testing.T) {
		adminCall(t, http.MethodPut, "/rules", "- name: short\n  for: 1s\n  fault: {type: Status, code: 503}\n", http.StatusOK)
		if err := list(t.Context()); !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("list during the outage = %v, want ServiceUnavailable", err)
		}
		eventually(t, 10*time.Second, "outage to end", func(ctx context.Context) (bool, error) {
			return list(ctx) == nil, nil
		})
	})

	t.Run("shipped scenarios load by name", func(t *testing.T) {
		body := adminCall(t, http.MethodPut, "/scenarios/flaky", "", http.StatusOK)
		if !strings.Contains(body, "transient-shoot-errors") {
			t.Errorf("scenario reply = %s", body)
		}
		if got := sim.FaultRules(); len(got) != 1 || got[0].Probability == nil || *got[0].Probability != 0.1 {
			t.Errorf("fault rules after loading flaky = %+v", got)
		}
		adminCall(t, http.MethodPut, "/scenarios/no-such-thing", "", http.StatusNotFound)
		adminCall(t, http.MethodDelete, "/rules", "", http.StatusNoContent)
		adminCall(t, http.MethodPut, "/rules", `[{"fault":{"type":"Explode"}}]`, http.StatusUnprocessableEntity)
	})
}

// TestLifecycleRulesThroughAdminAPI replaces the lifecycle rules at run time.
func TestLifecycleRulesThroughAdminAPI(t *testing.T) {
	t.Cleanup(func() { _ = sim.SetLifecycleRules(nil) })
	adminCall(t, http.MethodPut, "/lifecycle-rules", "- name: stuck\n  shoot: '*stuck*'\n  outcome: Hang\n", http.StatusOK)
	if got := sim.LifecycleRules(); len(got) != 1 || got[0].Name != "stuck" || got[0].Outcome != "Hang" {
		t.Errorf("lifecycle rules = %+v", got)
	}
	if body := adminCall(t, http.MethodGet, "/lifecycle-rules", "", http.StatusOK); !strings.Contains(body, `"stuck"`) {
		t.Errorf("GET /lifecycle-rules = %s", body)
	}
	adminCall(t, http.MethodPut, "/lifecycle-rules", `[{"outcome":"Failed","codes":["ERR_BANANA"]}]`, http.StatusUnprocessableEntity)
	adminCall(t, http.MethodDelete, "/lifecycle-rules", "", http.StatusNoContent)
	if got := sim.LifecycleRules(); len(got) != 0 {
		t.Errorf("lifecycle rules after DELETE = %+v", got)
	}
}

// TestProfilesThroughAdminAPI reads the simulator's own profiles, which a benchmark takes to tell
// the simulator's limits from the manager's: the index, a named profile and a CPU profile.
func TestProfilesThroughAdminAPI(t *testing.T) {
	if body := adminCall(t, http.MethodGet, "/debug/pprof/", "", http.StatusOK); !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ lists no goroutine profile: %.200s", body)
	}
	for _, path := range []string{"/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		// Profiles are gzip-compressed protocol buffers.
		if body := adminCall(t, http.MethodGet, path, "", http.StatusOK); !strings.HasPrefix(body, "\x1f\x8b") {
			t.Errorf("GET %s is no gzip-compressed profile: %q", path, body[:min(len(body), 16)])
		}
	}
}

// adminCall sends a request to the admin API and returns the reply body.
func adminCall(t *testing.T, method, path, body string, wantCode int) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, sim.AdminURL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	reply, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, reply, wantCode)
	}
	return string(reply)
}

// TestRequestLogThroughAdminAPI reads the front proxy's request log: a request made as the
// manager makes it appears with its verb, shoot name, answer and arrival time, and the log
// pages by sequence number.
func TestRequestLogThroughAdminAPI(t *testing.T) {
	var first proxy.RequestPage
	if err := json.Unmarshal([]byte(adminCall(t, http.MethodGet, "/requests", "", http.StatusOK)), &first); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	err := garden.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "no-such-shoot"}, &gardencorev1beta1.Shoot{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get = %v, want NotFound", err)
	}
	var found *proxy.RequestRecord
	eventually(t, 5*time.Second, "the get in the request log", func(context.Context) (bool, error) {
		var page proxy.RequestPage
		body := adminCall(t, http.MethodGet, fmt.Sprintf("/requests?after=%d", first.Next), "", http.StatusOK)
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			return false, err
		}
		for i, r := range page.Records {
			if r.Name == "no-such-shoot" {
				found = &page.Records[i]
				return true, nil
			}
		}
		return false, nil
	})
	if found.Verb != "get" || found.Resource != "shoots" || found.Namespace != namespace || found.Code != http.StatusNotFound ||
		found.Seq <= first.Next || found.Time.Before(before) {
		t.Errorf("record = %+v, want the get of no-such-shoot answered 404", found)
	}
	var one proxy.RequestPage
	if err := json.Unmarshal([]byte(adminCall(t, http.MethodGet, "/requests?limit=1", "", http.StatusOK)), &one); err != nil {
		t.Fatal(err)
	}
	if len(one.Records) != 1 || one.Next != one.Records[0].Seq {
		t.Errorf("page of one = %+v", one)
	}
	adminCall(t, http.MethodGet, "/requests?after=-1", "", http.StatusBadRequest)
}

// TestGardenAdminKubeconfig reads the garden directly with the kubeconfig the CLI writes for
// inspection: no fault rule applies and the request log does not see it.
func TestGardenAdminKubeconfig(t *testing.T) {
	t.Cleanup(func() { _ = sim.SetFaults(nil) })
	if err := sim.SetFaults([]fault.Rule{{Name: "outage", Fault: fault.Fault{Type: fault.TypeStatus, Code: 503}}}); err != nil {
		t.Fatal(err)
	}
	data, err := sim.GardenAdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	last := sim.Requests(0, 0).Next
	if err := c.List(t.Context(), &gardencorev1beta1.ShootList{}, client.InNamespace(namespace)); err != nil {
		t.Fatalf("list shoots during a proxy outage = %v", err)
	}
	if page := sim.Requests(last, 0); len(page.Records) != 0 {
		t.Errorf("the direct list reached the request log: %+v", page.Records)
	}
}
