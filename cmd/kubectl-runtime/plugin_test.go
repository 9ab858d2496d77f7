package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// t0 is the plugin's clock in the golden tests: every time in the fixtures' statuses and events
// is relative to it, so the relative and absolute times in the outputs never change. It lies
// years after any day the tests run on, so that the ages of the Runtimes, which the API server's
// creation times decide, are whole years of two digits ("13y") until 2030, and the table columns
// after AGE keep their place in the golden files once withAges has replaced them.
var t0 = time.Date(2040, time.March, 14, 12, 0, 0, 0, time.UTC)

// at returns t0 moved by d, as a status time.
func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

func atp(d time.Duration) *metav1.Time { t := at(d); return &t }

const ns = "kcp-system"

// fixture is a Runtime in one engine state, as the manager would have written its status.
type fixture struct {
	name   string
	status infrav1.RuntimeStatus
	// deleting deletes the Runtime (held by a finalizer) before its status is written.
	deleting bool
	// gardenerCluster, when set, is the status of the Runtime's GardenerCluster.
	gardenerCluster *infrav1.GardenerClusterStatus
	// events are the events the manager recorded for the Runtime.
	events []eventsv1.Event
}

func ready(status metav1.ConditionStatus, reason, msg string, since time.Duration) []metav1.Condition {
	return []metav1.Condition{{Type: infrav1.ConditionReady, Status: status, Reason: reason, Message: msg, LastTransitionTime: at(since)}}
}

// quotaMessage is a retry record's message as the engine writes it: the reason, then the error.
const quotaMessage = "InfraQuotaExceeded: shoot garden-kyma/c-quota: Create failed [ERR_INFRA_QUOTA_EXCEEDED]: " +
	"Service Quotas: the maximum number of VPCs has been reached in region eu-central-1"

func quotaGardener() *infrav1.GardenerStatus {
	return &infrav1.GardenerStatus{
		LastOperation: &infrav1.LastOperation{Type: "Create", State: "Failed", Progress: 10,
			Description: "Infrastructure reconciliation failed", LastUpdateTime: at(-4 * time.Minute)},
		LastErrors: []infrav1.LastError{{Codes: []string{"ERR_INFRA_QUOTA_EXCEEDED"},
			Description: "Service Quotas: the maximum number of VPCs has been reached in region eu-central-1"}},
	}
}

func step(name string, entered time.Duration, deadline *metav1.Time) *infrav1.StepStatus {
	return &infrav1.StepStatus{Name: name, EnteredAt: at(entered), Deadline: deadline}
}

// fixtures are Runtimes in every state of the engine.
func fixtures() []fixture {
	failing := "Step WaitForShoot failed and is retried with backoff: " + quotaMessage
	return []fixture{
		{name: "new"},
		{name: "progressing", status: infrav1.RuntimeStatus{EngineStatus: infrav1.EngineStatus{
			State: infrav1.StatePending, Step: step(runtimectrl.StepApplyShoot, -3*time.Second, nil),
			Conditions: ready(metav1.ConditionFalse, fsm.ReasonProgressing, "Step ApplyShoot", -3*time.Second),
		}}},
		{name: "waiting", status: infrav1.RuntimeStatus{
			EngineStatus: infrav1.EngineStatus{
				State: infrav1.StatePending, Step: step(runtimectrl.StepWaitForShoot, -12*time.Minute, atp(48*time.Minute)),
				Conditions: ready(metav1.ConditionFalse, fsm.ReasonWaiting, "Step WaitForShoot waits: Gardener operation Create is Processing", -12*time.Minute),
			},
			Gardener: &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Create", State: "Processing", Progress: 40,
				Description: "Waiting until the infrastructure has been reconciled", LastUpdateTime: at(-time.Minute)}},
		}},
		{name: "retrying", status: infrav1.RuntimeStatus{
			EngineStatus: infrav1.EngineStatus{
				State: infrav1.StatePending, Step: step(runtimectrl.StepWaitForShoot, -20*time.Minute, atp(40*time.Minute)),
				Conditions: ready(metav1.ConditionFalse, fsm.ReasonRetrying, failing, -9*time.Minute),
				Retry: &infrav1.RetryStatus{Step: runtimectrl.StepWaitForShoot, Attempt: 3, Limit: 10, Class: "Transient",
					Reason: "InfraQuotaExceeded", Message: quotaMessage, FirstFailure: at(-9 * time.Minute),
					LastFailure: at(-time.Minute), NextRetryAt: atp(2*time.Minute + 30*time.Second)},
			},
			Gardener: quotaGardener(),
		}},
		{name: "paused", status: infrav1.RuntimeStatus{EngineStatus: infrav1.EngineStatus{
			State: infrav1.StatePending, Step: step(runtimectrl.StepApplyShoot, -6*time.Minute, nil),
			Conditions: ready(metav1.ConditionFalse, fsm.ReasonPaused,
				"Step ApplyShoot waits until a shared dependency is back: the Gardener circuit is open", -4*time.Minute),
			Retry: &infrav1.RetryStatus{Step: runtimectrl.StepApplyShoot, Attempt: 1, Limit: 10, Class: "Paused",
				Reason: "GardenerUnavailable", Message: "the Gardener circuit is open", FirstFailure: at(-5 * time.Minute),
				LastFailure: at(-4 * time.Minute), PausedAt: atp(-4 * time.Minute)},
		}}},
		{name: "failed-exhausted",
			status: infrav1.RuntimeStatus{
				EngineStatus: infrav1.EngineStatus{
					State: infrav1.StateFailed, Step: step(runtimectrl.StepWaitForShoot, -2*time.Hour, atp(-time.Hour)),
					Conditions: ready(metav1.ConditionFalse, infrav1.ReasonRetriesExhausted,
						"Step WaitForShoot failed until its retries were exhausted: "+quotaMessage, -17*time.Minute),
					Retry: &infrav1.RetryStatus{Step: runtimectrl.StepWaitForShoot, Attempt: 10, Limit: 10, Class: "Transient",
						Reason: "InfraQuotaExceeded", Message: quotaMessage, FirstFailure: at(-2 * time.Hour),
						LastFailure: at(-17 * time.Minute), NextRetryAt: atp(43 * time.Minute)},
				},
				Gardener: quotaGardener(),
			},
			events: []eventsv1.Event{
				event(corev1.EventTypeWarning, fsm.EventStepFailed, failing, -2*time.Hour, -30*time.Minute, 9),
				event(corev1.EventTypeWarning, infrav1.ReasonRetriesExhausted,
					"Step WaitForShoot failed until its retries were exhausted: "+quotaMessage, -17*time.Minute, 0, 1),
			},
		},
		{name: "failed-user-error", status: infrav1.RuntimeStatus{EngineStatus: infrav1.EngineStatus{
			State: infrav1.StateFailed, Step: step(runtimectrl.StepApplyShoot, -30*time.Minute, nil),
			Conditions: ready(metav1.ConditionFalse, infrav1.ReasonUserActionRequired,
				"Step ApplyShoot failed and needs the user to act: SecretBindingNotFound: create shoot c-user: the secret binding \"hyperscaler secret\" does not exist", -30*time.Minute),
			Retry: &infrav1.RetryStatus{Step: runtimectrl.StepApplyShoot, Attempt: 0, Limit: 10, Class: "Terminal",
				Reason: "SecretBindingNotFound", Message: "SecretBindingNotFound: create shoot c-user: the secret binding \"hyperscaler secret\" does not exist",
				FirstFailure: at(-30 * time.Minute), LastFailure: at(-30 * time.Minute), NextRetryAt: atp(30 * time.Minute)},
		}}},
		{name: "failed-timeout", status: infrav1.RuntimeStatus{
			EngineStatus: infrav1.EngineStatus{
				State: infrav1.StateFailed, Step: step(runtimectrl.StepWaitForShoot, -65*time.Minute, atp(-5*time.Minute)),
				Conditions: ready(metav1.ConditionFalse, infrav1.ReasonStepTimedOut,
					"Step WaitForShoot timed out: no progress within 1h0m0s: Gardener operation Create is Processing", -5*time.Minute),
				Retry: &infrav1.RetryStatus{Step: runtimectrl.StepWaitForShoot, Limit: 10, Class: "Timeout", Reason: "DeadlineExceeded",
					Message:      "no progress within 1h0m0s: Gardener operation Create is Processing",
					FirstFailure: at(-5 * time.Minute), LastFailure: at(-5 * time.Minute), NextRetryAt: atp(55 * time.Minute)},
			},
			Gardener: &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Create", State: "Processing", Progress: 83,
				Description: "Waiting until the control plane is ready", LastUpdateTime: at(-50 * time.Minute)}},
		}},
		{name: "deleting", deleting: true, status: infrav1.RuntimeStatus{EngineStatus: infrav1.EngineStatus{
			State: infrav1.StateTerminating, Step: step(runtimectrl.StepWaitForShootDeletion, -2*time.Minute, atp(58*time.Minute)),
			Conditions: ready(metav1.ConditionFalse, fsm.ReasonWaiting, "Step WaitForShootDeletion waits: Gardener operation Delete is Processing", -2*time.Minute),
		}}},
		{name: "ready",
			status: infrav1.RuntimeStatus{
				EngineStatus: infrav1.EngineStatus{
					State: infrav1.StateReady, Step: step(fsm.StepDone, -3*time.Hour, nil),
					Conditions: ready(metav1.ConditionTrue, fsm.ReasonReady, "All steps succeeded", -3*time.Hour),
				},
				ProvisioningCompleted: true,
				Gardener: &infrav1.GardenerStatus{LastOperation: &infrav1.LastOperation{Type: "Reconcile", State: "Succeeded", Progress: 100,
					Description: "Shoot cluster has been successfully reconciled.", LastUpdateTime: at(-3 * time.Hour)}},
			},
			gardenerCluster: &infrav1.GardenerClusterStatus{
				EngineStatus:        infrav1.EngineStatus{State: infrav1.StateReady},
				KubeconfigExpiresAt: atp(21 * time.Hour), KubeconfigRotatedAt: atp(-3 * time.Hour),
			},
			events: []eventsv1.Event{
				event(corev1.EventTypeNormal, fsm.EventRetryRequested, "Manual retry of step WaitForShoot requested: the retry budget is reset", -4*time.Hour, 0, 1),
				event(corev1.EventTypeNormal, fsm.EventRecovered, "Step WaitForShoot succeeded again: no longer failed", -3*time.Hour, 0, 1),
			},
		},
	}
}

// event is an Event as the manager's recorder writes it, first seen at first and, for a series
// of count, last seen at last.
func event(typ, reason, note string, first, last time.Duration, count int32) eventsv1.Event {
	e := eventsv1.Event{
		EventTime: metav1.NewMicroTime(t0.Add(first)), Type: typ, Reason: reason, Action: reason, Note: note,
		ReportingController: "infrastructure-manager", ReportingInstance: "infrastructure-manager-0",
	}
	if count > 1 {
		e.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(t0.Add(last))}
	}
	return e
}

var (
	env        *testenv.Env
	kubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// runTests starts a control plane, writes a kubeconfig for the plugin and creates the fixtures.
func runTests(m *testing.M) int {
	ctx := context.Background()
	var err error
	if env, err = testenv.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-runtime tests:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "kubectl-runtime tests:", err)
		}
	}()
	dir, err := os.MkdirTemp("", "kubectl-runtime-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	// The context's namespace is default: the tests pass -n as a person would.
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := localenv.WriteKubeconfig(kubeconfig, "envtest", metav1.NamespaceDefault, env.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := env.CreateNamespace(ctx, ns); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, f := range fixtures() {
		if err := create(ctx, f); err != nil {
			fmt.Fprintf(os.Stderr, "create fixture %s: %v\n", f.name, err)
			return 1
		}
	}
	return m.Run()
}

// baseRuntime is upstream's AWS example Runtime, named for the fixture.
func baseRuntime(name string) (*infrav1.Runtime, error) {
	data, err := os.ReadFile(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	if err != nil {
		return nil, err
	}
	rt := &infrav1.Runtime{}
	if err := yaml.Unmarshal(data, rt); err != nil {
		return nil, err
	}
	rt.Name, rt.Namespace = name, ns
	rt.Labels[infrav1.LabelRuntimeID] = "id-" + name
	rt.Labels[infrav1.LabelShootName] = "c-" + name
	rt.Spec.Shoot.Name = "c-" + name
	return rt, nil
}

func create(ctx context.Context, f fixture) error {
	rt, err := baseRuntime(f.name)
	if err != nil {
		return err
	}
	if f.deleting {
		rt.Finalizers = []string{runtimectrl.Finalizer}
	}
	if err := env.Client.Create(ctx, rt); err != nil {
		return err
	}
	if f.deleting {
		if err := env.Client.Delete(ctx, rt); err != nil {
			return err
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
			return err
		}
	}
	if f.status.Step != nil {
		rt.Status = f.status
		rt.Status.ObservedGeneration = rt.Generation
		if err := env.Client.Status().Update(ctx, rt); err != nil {
			return err
		}
	}
	if f.gardenerCluster != nil {
		gc := &infrav1.GardenerCluster{}
		gc.Name, gc.Namespace = rt.Labels[infrav1.LabelRuntimeID], ns
		gc.Spec.Shoot.Name = rt.Spec.Shoot.Name
		gc.Spec.Kubeconfig.Secret = infrav1.SecretKeyRef{Name: "kubeconfig-" + gc.Name, Namespace: ns, Key: "config"}
		if err := env.Client.Create(ctx, gc); err != nil {
			return err
		}
		gc.Status = *f.gardenerCluster
		if err := env.Client.Status().Update(ctx, gc); err != nil {
			return err
		}
	}
	for i, e := range f.events {
		e.Name, e.Namespace = fmt.Sprintf("%s.%d", f.name, i), ns
		e.Regarding = corev1.ObjectReference{Kind: "Runtime", APIVersion: infrav1.GroupVersion.String(),
			Namespace: ns, Name: rt.Name, UID: rt.UID, ResourceVersion: rt.ResourceVersion}
		if err := env.Client.Create(ctx, &e); err != nil {
			return err
		}
	}
	return nil
}

// plugin runs the plugin with the test's kubeconfig and clock.
func plugin(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = newRoot(&out, &errOut, func() time.Time { return t0 }).execute(append([]string{"--kubeconfig", kubeconfig}, args...))
	return out.String(), errOut.String(), err
}

// golden compares got with testdata/plugin/NAME, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "plugin", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden output (run with -update to write it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s; run with -update and review the diff\ngot:\n%s", path, got)
	}
}

// withAges replaces the Runtimes' ages, which the API server's creation times decide, with
// <age>, after checking that each is what kubectl would show.
func withAges(t *testing.T, out string) string {
	t.Helper()
	list := &infrav1.RuntimeList{}
	if err := env.Client.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	ages := map[string]string{}
	for _, rt := range list.Items {
		ages[rt.Name] = age(t0, rt.CreationTimestamp)
	}
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		fields := strings.Fields(line)
		if len(fields) == 0 || i == 0 {
			continue
		}
		a, ok := ages[fields[0]]
		if !ok {
			t.Errorf("line %q names no fixture", line)
			continue
		}
		j := strings.LastIndex(line, "  "+a)
		if j < 0 {
			t.Errorf("line %q shows no age %s", line, a)
			continue
		}
		lines[i] = line[:j] + "  <age>" + line[j+2+len(a):]
	}
	return strings.Join(lines, "\n")
}

// TestListGolden lists the fixtures with each filter and format of the table.
func TestListGolden(t *testing.T) {
	tests := []struct {
		name string   // golden file
		args []string // arguments after list
	}{
		{"list.txt", nil},
		{"list-wide.txt", []string{"-o", "wide"}},
		{"list-failing.txt", []string{"--failing"}},
		{"list-retrying.txt", []string{"--retrying"}},
		{"list-failing-retrying.txt", []string{"--failing", "--retrying"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := plugin(t, append([]string{"list", "-n", ns}, tt.args...)...)
			if err != nil {
				t.Fatalf("list: %v\n%s", err, errOut)
			}
			golden(t, tt.name, withAges(t, out))
		})
	}
}

// TestListStructured checks that -o json and -o yaml print the selected Runtimes as objects a
// client can read back, with their kind.
func TestListStructured(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, errOut, err := plugin(t, "list", "-n", ns, "--failing", "-o", format)
			if err != nil {
				t.Fatalf("list: %v\n%s", err, errOut)
			}
			got := &infrav1.RuntimeList{}
			if err := yaml.UnmarshalStrict([]byte(out), got); err != nil {
				t.Fatalf("decode: %v\n%s", err, out)
			}
			var names []string
			for _, rt := range got.Items {
				if rt.Kind != "Runtime" || rt.APIVersion != infrav1.GroupVersion.String() {
					t.Errorf("%s: kind %q apiVersion %q", rt.Name, rt.Kind, rt.APIVersion)
				}
				names = append(names, rt.Name+"="+string(rt.Status.State))
			}
			want := "failed-exhausted=Failed failed-timeout=Failed failed-user-error=Failed"
			if strings.Join(names, " ") != want {
				t.Errorf("items = %v, want %s", names, want)
			}
		})
	}
}

// TestListEmptyAndErrors: an empty selection says so on stderr; an unknown format is refused.
func TestListEmptyAndErrors(t *testing.T) {
	out, errOut, err := plugin(t, "list", "--failing")
	if err != nil || out != "" || errOut != "No Runtimes failing in namespace \"default\".\n" {
		t.Errorf("list in default: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	if _, _, err := plugin(t, "list", "-n", ns, "-o", "xml"); err == nil || !strings.Contains(err.Error(), `unknown output format "xml": use one of wide, yaml, json`) {
		t.Errorf("list -o xml: error %v", err)
	}
	if _, _, err := plugin(t, "status", "nope", "-n", ns); err == nil || !strings.Contains(err.Error(), `runtime "nope" not found in namespace "kcp-system"`) {
		t.Errorf("status nope: error %v", err)
	}
}

// TestExplainGolden explains a Runtime in each state of the engine.
func TestExplainGolden(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			out, errOut, err := plugin(t, "explain", f.name, "-n", ns)
			if err != nil {
				t.Fatalf("explain: %v\n%s", err, errOut)
			}
			golden(t, "explain-"+f.name+".txt", out)
		})
	}
}

// TestStatusGolden shows the status of a Runtime in each state of the engine.
func TestStatusGolden(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			out, errOut, err := plugin(t, "status", f.name, "-n", ns)
			if err != nil {
				t.Fatalf("status: %v\n%s", err, errOut)
			}
			golden(t, "status-"+f.name+".txt", out)
		})
	}
}

// TestStatusStructured checks -o json: the report carries the retry record, the events and the
// kubeconfig as the API server has them.
func TestStatusStructured(t *testing.T) {
	out, errOut, err := plugin(t, "status", "failed-exhausted", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, errOut)
	}
	var rep report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	if rep.Phase != phaseFailed || rep.Retry == nil || rep.Retry.Attempt != 10 || rep.Retry.Reason != "InfraQuotaExceeded" {
		t.Errorf("phase %s, retry %+v", rep.Phase, rep.Retry)
	}
	if len(rep.Events) != 2 || rep.Events[0].Reason != fsm.EventStepFailed || rep.Events[0].Count != 9 || rep.Events[1].Reason != infrav1.ReasonRetriesExhausted {
		t.Errorf("events = %+v", rep.Events)
	}
	if rep.Alerts != nil {
		t.Errorf("alerts without --prometheus: %+v", *rep.Alerts)
	}
}

// prometheusAlerts serves answers of Prometheus' GET /api/v1/alerts in its documented shape,
// with the labels the shipped rules give their alerts.
func prometheusAlerts(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/alerts" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStatusWithPrometheus shows the alerts firing for a Runtime: its own, not another
// Runtime's, and the platform alerts that mute it.
func TestStatusWithPrometheus(t *testing.T) {
	active := t0.Add(-16 * time.Minute).Format(time.RFC3339)
	url := prometheusAlerts(t, `{"status":"success","data":{"alerts":[
		{"labels":{"alertname":"RuntimeRetriesExhausted","severity":"critical","runtime_id":"id-failed-exhausted","runtime_name":"failed-exhausted","step":"WaitForShoot","reason":"InfraQuotaExceeded"},
		 "annotations":{"summary":"Runtime failed-exhausted failed: retries exhausted in step WaitForShoot (InfraQuotaExceeded)"},"state":"firing","activeAt":"`+active+`","value":"1e+00"},
		{"labels":{"alertname":"RuntimeStuck","severity":"critical","runtime_id":"id-failed-timeout","step":"WaitForShoot"},
		 "annotations":{"summary":"Runtime id-failed-timeout stuck"},"state":"firing","activeAt":"`+active+`","value":"1e+00"},
		{"labels":{"alertname":"GardenerUnavailable","severity":"critical"},
		 "annotations":{"summary":"Gardener is unavailable"},"state":"pending","activeAt":"`+active+`","value":"2e+00"},
		{"labels":{"alertname":"Watchdog","severity":"none"},"annotations":{},"state":"firing","activeAt":"`+active+`","value":"1e+00"}
	]}}`)
	out, errOut, err := plugin(t, "status", "failed-exhausted", "-n", ns, "--prometheus", url)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, errOut)
	}
	golden(t, "status-failed-exhausted-prometheus.txt", out)

	quiet := prometheusAlerts(t, `{"status":"success","data":{"alerts":[]}}`)
	out, _, err = plugin(t, "status", "ready", "-n", ns, "--prometheus", quiet)
	if err != nil || !strings.Contains(out, "Alerts:   none pending or firing for this Runtime\n") {
		t.Errorf("status ready: %v\n%s", err, out)
	}
	broken := prometheusAlerts(t, `{"status":"error","error":"query timed out"}`)
	if _, _, err := plugin(t, "status", "ready", "-n", ns, "--prometheus", broken); err == nil || !strings.Contains(err.Error(), "query timed out") {
		t.Errorf("status with a failing Prometheus: error %v", err)
	}
}

// TestRetry annotates a Failed Runtime and waits for the manager's echo, which a stand-in
// writes as the engine does: the budget reset and the step run again.
func TestRetry(t *testing.T) {
	f := fixtures()[5] // failed-exhausted
	f.name, f.events = "retry-me", nil
	if err := create(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	echoed := make(chan error, 1)
	go func() { echoed <- echo(t.Context(), "retry-me") }()
	out, errOut, err := plugin(t, "retry", "retry-me", "-n", ns, "--timeout", "30s")
	if err != nil {
		t.Fatalf("retry: %v\n%s", err, errOut)
	}
	if err := <-echoed; err != nil {
		t.Fatal(err)
	}
	golden(t, "retry.txt", out)
	rt := &infrav1.Runtime{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "retry-me"}, rt); err != nil {
		t.Fatal(err)
	}
	if got := rt.Annotations[infrav1.RetryRequestedAtAnnotation]; got != t0.Format(time.RFC3339Nano) {
		t.Errorf("annotation = %q", got)
	}
}

// TestRetryWithoutManager: nobody takes the request in, and the command says what to check.
func TestRetryWithoutManager(t *testing.T) {
	f := fixtures()[6] // failed-user-error
	f.name = "retry-alone"
	if err := create(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	out, _, err := plugin(t, "retry", "retry-alone", "-n", ns, "--timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), "the manager did not take the retry in within 2s: is it running?") {
		t.Errorf("error = %v", err)
	}
	if !strings.Contains(out, "retry requested") {
		t.Errorf("stdout = %q", out)
	}
	out, _, err = plugin(t, "retry", "retry-alone", "-n", ns, "--wait=false")
	if err != nil || !strings.Contains(out, "it was Failed") {
		t.Errorf("retry --wait=false: %v, %q", err, out)
	}
}

// echo plays the manager: once the Runtime carries a new retry request, it writes the status the
// engine writes for it, the request echoed and the step run again with a fresh budget.
func echo(ctx context.Context, name string) error {
	return testenv.Eventually(ctx, 20*time.Second, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		rt := &infrav1.Runtime{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rt); err != nil {
			return false, err
		}
		requested := rt.Annotations[infrav1.RetryRequestedAtAnnotation]
		if requested == "" {
			return false, nil
		}
		rt.Status.RetryRequestedAt = requested
		rt.Status.State = infrav1.StatePending
		rt.Status.Step.EnteredAt = at(0)
		rt.Status.Retry = &infrav1.RetryStatus{Step: runtimectrl.StepWaitForShoot, Attempt: 1, Limit: 10, Class: "Transient",
			Reason: "InfraQuotaExceeded", Message: quotaMessage, FirstFailure: at(0), LastFailure: at(0), NextRetryAt: atp(20 * time.Second)}
		rt.Status.Conditions = ready(metav1.ConditionFalse, fsm.ReasonRetrying, "Step WaitForShoot failed and is retried with backoff: "+quotaMessage, 0)
		if err := env.Client.Status().Update(ctx, rt); err != nil {
			return false, fmt.Errorf("echo: %w", err)
		}
		return true, nil
	})
}

// TestEveryStepIsDescribed: explain has words for every step of the Runtime controller.
func TestEveryStepIsDescribed(t *testing.T) {
	m := runtimectrl.NewMachine(runtimectrl.Config{})
	for _, s := range m.Steps {
		if _, ok := stepDoes[s.Name]; !ok {
			t.Errorf("step %s has no entry in stepDoes", s.Name)
		}
	}
	if len(stepDoes) != len(m.Steps)+1 {
		t.Errorf("stepDoes has %d entries, the machine %d steps and Done", len(stepDoes), len(m.Steps))
	}
}

// TestPhaseOf covers the derivation the commands share, including the cases the fixtures do not
// show: a deletion whose step retries, and a waiting step with an earlier failure.
func TestPhaseOf(t *testing.T) {
	now := metav1.NewTime(t0)
	tests := []struct {
		name   string               // what the status says
		status infrav1.EngineStatus // the engine's status
		del    bool                 // the Runtime is being deleted
		want   phase                // the derived phase
	}{
		{"no status", infrav1.EngineStatus{}, false, phaseNew},
		{"ready", infrav1.EngineStatus{State: infrav1.StateReady, Step: step(fsm.StepDone, 0, nil)}, false, phaseReady},
		{"deletion retries", infrav1.EngineStatus{State: infrav1.StateTerminating, Step: step(runtimectrl.StepDeleteShoot, 0, nil),
			Retry: &infrav1.RetryStatus{Step: runtimectrl.StepDeleteShoot, Attempt: 1, NextRetryAt: &now}}, true, phaseRetrying},
		{"deletion", infrav1.EngineStatus{State: infrav1.StateTerminating, Step: step(runtimectrl.StepDeleteShoot, 0, nil)}, true, phaseDeleting},
		{"waits after a failure", infrav1.EngineStatus{State: infrav1.StatePending, Step: step(runtimectrl.StepWaitForShoot, 0, nil),
			Conditions: ready(metav1.ConditionFalse, fsm.ReasonWaiting, "Step WaitForShoot waits: Gardener retries the failed operation", 0),
			Retry:      &infrav1.RetryStatus{Step: runtimectrl.StepWaitForShoot, Attempt: 2}}, false, phaseWaiting},
		{"failed while paused", infrav1.EngineStatus{State: infrav1.StateFailed, Step: step(runtimectrl.StepApplyShoot, 0, nil),
			Retry: &infrav1.RetryStatus{Step: runtimectrl.StepApplyShoot, PausedAt: &now}}, false, phaseFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &infrav1.Runtime{}
			rt.Status.EngineStatus = tt.status
			if tt.del {
				rt.DeletionTimestamp = &now
			}
			if got := phaseOf(rt); got != tt.want {
				t.Errorf("phaseOf = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestExplainRetryClasses covers the retry records the fixtures do not show: a write conflict,
// which spends no attempt, and a throttling reply.
func TestExplainRetryClasses(t *testing.T) {
	tests := []struct {
		name     string // what failed
		rec      infrav1.RetryStatus
		wantNow  string // a fragment of what explain says now
		wantNext string // a fragment of what it says comes next
	}{
		{"conflict", infrav1.RetryStatus{Step: runtimectrl.StepApplyShoot, Attempt: 0, Limit: 10, Class: "Conflict", Reason: "Conflict",
			Message: "Conflict: the object has been modified", LastFailure: at(-time.Second), NextRetryAt: atp(time.Second)},
			"failed without spending an attempt, last 1s ago, with a write conflict (Conflict): the object has been modified.",
			"Write conflicts are retried at once and spend no attempt until they persist."},
		{"throttled", infrav1.RetryStatus{Step: runtimectrl.StepApplyShoot, Attempt: 2, Limit: 10, Class: "Throttled", Reason: "GardenerThrottled",
			Message: "GardenerThrottled: too many requests", LastFailure: at(-time.Minute), NextRetryAt: atp(30 * time.Second)},
			"failed twice, last 60s ago, with a throttling reply (GardenerThrottled): Gardener asked to slow down: too many requests.",
			"Attempt 3 of 10 runs in 30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &infrav1.Runtime{}
			rt.Name, rt.Namespace = "x", ns
			rt.Status.State = infrav1.StatePending
			rt.Status.Step = step(runtimectrl.StepApplyShoot, -time.Minute, nil)
			rt.Status.Retry = &tt.rec
			e := explain(rt, nil, t0)
			if e.headline != "retrying a failed step" || !strings.Contains(e.now, tt.wantNow) || !strings.Contains(e.next, tt.wantNext) {
				t.Errorf("explain = %+v\nwant now containing %q and next containing %q", e, tt.wantNow, tt.wantNext)
			}
		})
	}
}
