package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// Alert names of the shipped rules that the scenarios expect.
const (
	alertExhausted   = "RuntimeRetriesExhausted"
	alertUserError   = "RuntimeFailedUserError"
	alertGardener    = "GardenerUnavailable"
	alertManagerDown = "InfrastructureManagerDown"
)

// perRuntimeAlerts are the alerts the shipped inhibit rule mutes while Gardener is unavailable or
// the manager is down.
var perRuntimeAlerts = []string{alertExhausted, alertUserError, "RuntimeStuck", "KubeconfigExpiringSoon"}

// Bounds of the waits. Every one is a deadline for polling, never a fixed sleep, except
// absenceWindow: how long a receiver must stay silent to show that a notification is not sent
// (ten times the group interval of the adapted routing).
const (
	failTimeout   = 2 * time.Minute
	alertTimeout  = time.Minute
	absenceWindow = 10 * time.Second
)

// TestAlerting runs the scenarios as subtests in a fixed order, because they share one manager
// and one Prometheus: ManagerDown stops the manager, so it must come last (subtests keep their
// order under -shuffle, which reorders only top-level tests). Recovery continues the runtime that
// Exhaustion left Failed, so the two run as one pair. NoSecretLeaves comes just before
// ManagerDown: it reads the running manager's /metrics, and it searches everything the earlier
// scenarios (failures, the outage) left in logs, events, statuses and alerts. It logs the
// measured latencies in one summary line.
func TestAlerting(t *testing.T) {
	tm := &timings{}
	t.Cleanup(func() { t.Log(tm.summary()) })
	t.Run("ExhaustionThenRecovery", func(t *testing.T) {
		var exhausted *infrav1.Runtime
		// Separate subtests, so that Recovery runs even when an alert assertion of Exhaustion
		// fails, as long as the runtime did fail.
		t.Run("Exhaustion", func(t *testing.T) { testExhaustion(t, tm, &exhausted) })
		if exhausted == nil {
			t.Fatal("no Failed runtime to recover: Exhaustion failed before it had one, or -run left it out (run the pair)")
		}
		t.Run("Recovery", func(t *testing.T) { testRecovery(t, tm, exhausted) })
	})
	t.Run("UserError", func(t *testing.T) { testUserError(t, tm) })
	t.Run("GardenerOutageInhibition", func(t *testing.T) { testGardenerOutageInhibition(t, tm) })
	t.Run("NoSecretLeaves", func(t *testing.T) { testNoSecretLeaves(t, tm) })
	t.Run("ManagerDown", func(t *testing.T) { testManagerDown(t, tm) })
	for _, r := range sys.receivers {
		if bad := r.badRequests(); len(bad) > 0 {
			t.Errorf("%s webhook got requests that were not its notifications: %v", r.name, bad)
		}
	}
}

// testExhaustion drives a runtime whose shoot creation keeps failing with
// ERR_INFRA_QUOTA_EXCEEDED to Failed/RetriesExhausted, and expects RuntimeRetriesExhausted at
// both on-call and dev-team, timed from the moment the runtime was seen Failed. It hands the
// runtime to *failed as soon as it is Failed, so Recovery can continue even when an alert
// assertion fails.
func testExhaustion(t *testing.T, tm *timings, failed **infrav1.Runtime) {
	rt := failingRuntime(t, "exhaust-1", gardencorev1beta1.ErrorInfraQuotaExceeded)
	created := time.Now()
	rt, failedAt := waitForRuntime(t, rt, failTimeout, "Failed", isFailed)
	*failed = rt
	t.Logf("runtime %s Failed (%s) %s after it was created", rt.Name, readyReason(rt), failedAt.Sub(created).Round(100*time.Millisecond))
	if got := readyReason(rt); got != infrav1.ReasonRetriesExhausted {
		t.Fatalf("Ready reason: got %s, want %s (retry %+v)", got, infrav1.ReasonRetriesExhausted, rt.Status.Retry)
	}
	if r := rt.Status.Retry; r == nil || r.Attempt != attempts || r.Reason != "InfraQuotaExceeded" || r.Class != "Transient" {
		t.Fatalf("retry record: got %+v, want %d attempts, reason InfraQuotaExceeded, class Transient", r, attempts)
	}

	rule := shippedAlert(t, alertExhausted)
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertExhausted, runtimeID: runtimeID(rt), status: "firing"}, alertTimeout)
		tm.add(t, "exhaustion->"+r.name, d.at.Sub(failedAt))
		checkRuntimeAlert(t, r.name, d.alert, rule, rt, map[string]string{
			"step": rt.Status.Retry.Step, "reason": "InfraQuotaExceeded", "class": "Transient",
		})
	}
}

// testRecovery clears the fault of the runtime Exhaustion left Failed and requests a manual
// retry; the runtime reaches Ready and both receivers get the resolved notification. The resolve
// is timed from the moment the runtime left Failed: that is when its runtime_failed series goes
// (the manual retry resets the budget), and the alert follows after keep_firing_for.
func testRecovery(t *testing.T, tm *timings, rt *infrav1.Runtime) {
	removeLifecycleRule(t, rt.Name)
	requested := time.Now()
	value := requestRetry(t, rt)

	var leftFailed time.Time
	rt, readyAt := waitForRuntime(t, rt, failTimeout, "Ready", func(rt *infrav1.Runtime) bool {
		if leftFailed.IsZero() && rt.Status.RetryRequestedAt == value && !isFailed(rt) {
			leftFailed = time.Now()
		}
		return rt.Status.State == infrav1.StateReady
	})
	if leftFailed.IsZero() {
		leftFailed = readyAt
	}
	t.Logf("runtime %s left Failed %s after the retry request and was Ready %s after it",
		rt.Name, leftFailed.Sub(requested).Round(100*time.Millisecond), readyAt.Sub(requested).Round(100*time.Millisecond))

	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertExhausted, runtimeID: runtimeID(rt), status: "resolved", since: requested}, alertTimeout)
		tm.add(t, "recovery->resolved("+r.name+")", d.at.Sub(leftFailed))
		t.Logf("%s: resolved %s after the runtime was Ready", r.name, d.at.Sub(readyAt).Round(100*time.Millisecond))
	}
	// One incident, one notification each way: keep_firing_for must not let the alert flap.
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		for _, status := range []string{"firing", "resolved"} {
			if got := r.find(match{alertname: alertExhausted, runtimeID: runtimeID(rt), status: status}); len(got) != 1 {
				t.Errorf("%s: got %d %s notifications for %s, want 1:\n%s", r.name, len(got), status, rt.Name, r.dump())
			}
		}
	}
}

// testUserError drives a runtime into the terminal ERR_INFRA_UNAUTHORIZED: RuntimeFailedUserError
// is a warning, so it reaches dev-team and, for a bounded window after that, not on-call.
func testUserError(t *testing.T, tm *timings) {
	rt := failingRuntime(t, "usererr-1", gardencorev1beta1.ErrorInfraUnauthorized)
	rt, failedAt := waitForRuntime(t, rt, failTimeout, "Failed", isFailed)
	if got := readyReason(rt); got != infrav1.ReasonUserActionRequired {
		t.Fatalf("Ready reason: got %s, want %s (retry %+v)", got, infrav1.ReasonUserActionRequired, rt.Status.Retry)
	}
	want := match{alertname: alertUserError, runtimeID: runtimeID(rt)}
	firing := want
	firing.status = "firing"
	d := waitDelivery(t, sys.devteam, firing, alertTimeout)
	tm.add(t, "usererror->"+sys.devteam.name, d.at.Sub(failedAt))
	checkRuntimeAlert(t, sys.devteam.name, d.alert, shippedAlert(t, alertUserError), rt, map[string]string{
		"step": rt.Status.Retry.Step, "reason": "InfraUnauthorized", "class": "Terminal",
	})

	// Alertmanager itself says where it routes the alert.
	alerts, err := amAlerts(t.Context(), sys.amURL, fmt.Sprintf("alertname=%q", alertUserError), fmt.Sprintf("runtime_id=%q", runtimeID(rt)))
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) == 0 {
		t.Errorf("Alertmanager does not list %s of %s", alertUserError, rt.Name)
	}
	for _, a := range alerts {
		var names []string
		for _, r := range a.Receivers {
			names = append(names, r.Name)
		}
		if strings.Join(names, ",") != devTeam {
			t.Errorf("Alertmanager routes %s to %v, want [%s]", alertUserError, names, devTeam)
		}
	}
	assertSilent(t, time.Until(d.at.Add(absenceWindow)), want, sys.oncall)
}

// testGardenerOutageInhibition checks that a real Gardener outage is one incident, raised from
// the manager's own metrics. The simulator answers every Gardener call with 503 (one fault rule,
// set through its admin API). A new runtime, outage-1, has to call Gardener to be provisioned;
// its failing calls open the manager's circuit breaker (infrastructure_manager_gardener_circuit_state
// 2), and the breaker's failing probes keep it open. Prometheus evaluates the shipped
// GardenerUnavailable rule on that series (expression as shipped, `for` and `keep_firing_for`
// scaled), and Alertmanager notifies on-call and dev-team of it exactly once each.
//
// While it fires, runtime outage-usererr-1 fails for a reason that needs no Gardener: the CA
// bundle of its OIDC provider is not PEM, which the CRD cannot see but kube-apiserver would not
// load, so ApplyAuthentication refuses the authentication configuration before any Gardener call,
// with the terminal InvalidRuntime. Its RuntimeFailedUserError fires in Prometheus, Alertmanager
// lists it as inhibited, and nobody is notified. (The other candidates are not real here: the
// e2e manager runs without a landscape file, which the audit-log-tenant check needs; and a
// runtime that was Failed before the outage would not notify again when the inhibition ends, as
// its group was notified already.)
//
// Then the fault goes: the breaker's next probe closes the circuit, GardenerUnavailable resolves
// once the max_over_time window of its expression has forgotten the open circuit and
// keep_firing_for has passed (each receiver gets one resolved notification), and the muted
// RuntimeFailedUserError reaches dev-team. No per-runtime alert reaches anyone while
// GardenerUnavailable fires.
//
// What outage-1 does meanwhile is the engine's business and not asserted: whether the calls the
// open circuit refuses spend attempts decides whether it fails (and pages on its own, before the
// rule's `for` has passed) or waits for the circuit to close. The test logs what it saw.
func testGardenerOutageInhibition(t *testing.T, tm *timings) {
	rule := shippedAlert(t, alertGardener)
	circuit := fmt.Sprintf(`infrastructure_manager_gardener_circuit_state{job=%q}`, job)
	// The scenario needs a closed circuit and no GardenerUnavailable left from before: otherwise
	// the alert could already be firing, and nothing here would have raised it.
	if v := promValue(t, "max("+circuit+")"); v != gardenclient.CircuitClosed {
		t.Fatalf("the circuit breaker is in state %v before the outage, want %d (closed)", v, gardenclient.CircuitClosed)
	}
	if firing := promValue(t, fmt.Sprintf(`count(ALERTS{alertname=%q})`, alertGardener)); firing != 0 {
		t.Fatalf("%s is already pending or firing before the outage", alertGardener)
	}
	served503 := fmt.Sprintf(`sum(infrastructure_manager_gardener_requests_total{job=%q,code="503"})`, job)
	before503 := promValue(t, served503)

	began := time.Now()
	setFaults(t, fault.Rule{Name: "gardener-outage", Fault: fault.Fault{
		Type: fault.TypeStatus, Code: http.StatusServiceUnavailable, Message: "Gardener is unavailable (end-to-end outage)",
	}})
	var endOnce sync.Once
	var ended time.Time
	endOutage := func() {
		endOnce.Do(func() {
			ended = time.Now()
			if err := clearFaults(context.Background()); err != nil {
				t.Errorf("end the outage: %v", err)
			}
		})
	}
	t.Cleanup(endOutage)

	driver := newRuntime(t, "outage-1")
	openedAt := waitForQuery(t, "the circuit breaker to open", fmt.Sprintf("max(max_over_time(%s[5s])) == %d", circuit, gardenclient.CircuitOpen), alertTimeout)
	tm.add(t, "outage->circuit-open", openedAt.Sub(began))
	if n := promValue(t, served503) - before503; n < circuitThreshold {
		t.Errorf("the manager counted %v replies 503 when its circuit opened, want at least %d (the threshold)", n, circuitThreshold)
	}

	var inhibiting time.Time
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertGardener, status: "firing", since: began}, alertTimeout)
		tm.add(t, "outage->"+r.name, d.at.Sub(began))
		checkPlatformAlert(t, r.name, d.alert, rule)
		if desc := d.alert.Annotations["description"]; strings.Contains(desc, "Circuit breaker: unknown") {
			t.Errorf("%s: %s does not know the circuit state: %q", r.name, alertGardener, desc)
		}
		if d.at.After(inhibiting) {
			inhibiting = d.at
		}
	}

	rt := newRuntimeWith(t, "outage-usererr-1", func(rt *infrav1.Runtime) {
		rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.CABundle = ptr.To("not a PEM certificate")
	})
	created := time.Now()
	rt, failedAt := waitForRuntime(t, rt, failTimeout, "Failed", isFailed)
	if r := rt.Status.Retry; readyReason(rt) != infrav1.ReasonUserActionRequired || r == nil ||
		r.Step != runtimectrl.StepApplyAuthentication || r.Reason != gardener.ReasonInvalidRuntime || r.Class != "Terminal" {
		t.Fatalf("runtime %s: Ready reason %s, retry %+v; want %s after a Terminal %s in %s",
			rt.Name, readyReason(rt), r, infrav1.ReasonUserActionRequired, gardener.ReasonInvalidRuntime, runtimectrl.StepApplyAuthentication)
	}
	t.Logf("runtime %s Failed (%s) %s after it was created, during the outage", rt.Name, rt.Status.Retry.Reason, failedAt.Sub(created).Round(100*time.Millisecond))
	// Prometheus fires the alert and Alertmanager mutes it: proof that it was there to be muted.
	var suppressedAt time.Time
	err := testenv.Eventually(t.Context(), alertTimeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		alerts, err := amAlerts(ctx, sys.amURL, fmt.Sprintf("alertname=%q", alertUserError), fmt.Sprintf("runtime_id=%q", runtimeID(rt)))
		if err != nil || len(alerts) == 0 {
			return false, err
		}
		suppressedAt = time.Now()
		a := alerts[0]
		return a.Status.State == "suppressed" && len(a.Status.InhibitedBy) > 0, fmt.Errorf("alert state %s, inhibited by %v", a.Status.State, a.Status.InhibitedBy)
	})
	if err != nil {
		t.Fatalf("%s of %s is not inhibited in Alertmanager: %v", alertUserError, rt.Name, err)
	}
	t.Logf("%s of %s is inhibited in Alertmanager; watching the receivers for %s", alertUserError, rt.Name, absenceWindow)
	assertSilent(t, time.Until(suppressedAt.Add(absenceWindow)), match{runtimeID: runtimeID(rt)}, sys.oncall, sys.devteam)

	endOutage()
	closedAt := waitForQuery(t, "the circuit breaker to close", fmt.Sprintf("max(%s) == %d", circuit, gardenclient.CircuitClosed), alertTimeout)
	tm.add(t, "outage-ended->circuit-closed", closedAt.Sub(ended))
	resolved := map[*receiver]time.Time{}
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertGardener, status: "resolved", since: ended}, resolveTimeout(t, rule))
		tm.add(t, "circuit-closed->resolved("+r.name+")", d.at.Sub(closedAt))
		resolved[r] = d.at
	}
	d := waitDelivery(t, sys.devteam, match{alertname: alertUserError, runtimeID: runtimeID(rt), status: "firing"}, alertTimeout)
	tm.add(t, "outage-ended->muted-alert("+sys.devteam.name+")", d.at.Sub(ended))
	t.Logf("%s: the muted %s arrived %s after the resolve of %s", sys.devteam.name, alertUserError,
		d.at.Sub(resolved[sys.devteam]).Round(100*time.Millisecond), alertGardener)
	checkRuntimeAlert(t, sys.devteam.name, d.alert, shippedAlert(t, alertUserError), rt, map[string]string{
		"step": runtimectrl.StepApplyAuthentication, "reason": gardener.ReasonInvalidRuntime, "class": "Terminal",
	})

	// Nothing per runtime got through while GardenerUnavailable fired. Alertmanager flushes every
	// group on its own timer, so a muted alert may leave up to one group interval before the
	// resolve of the alert that muted it.
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		for _, name := range perRuntimeAlerts {
			for _, got := range r.find(match{alertname: name, status: "firing", since: inhibiting}) {
				if got.at.Before(resolved[r].Add(-maxGroupInterval)) {
					t.Errorf("%s got %s while %s fired", r.name, got, alertGardener)
				}
			}
		}
		// One incident, one notification each way.
		for _, status := range []string{"firing", "resolved"} {
			if got := r.find(match{alertname: alertGardener, status: status, since: began}); len(got) != 1 {
				t.Errorf("%s: got %d %s notifications of %s, want 1:\n%s", r.name, len(got), status, alertGardener, r.dump())
			}
		}
	}
	assertSilent(t, 0, match{alertname: alertUserError, runtimeID: runtimeID(rt)}, sys.oncall)
	logDriver(t, driver, began, inhibiting)
}

// logDriver logs what became of the runtime whose calls drove the breaker open: its state after
// the outage, and any page about it, which can only have arrived before GardenerUnavailable could
// mute it.
func logDriver(t *testing.T, driver *infrav1.Runtime, began, inhibiting time.Time) {
	t.Helper()
	got := &infrav1.Runtime{}
	if err := sys.env.Client.Get(t.Context(), client.ObjectKeyFromObject(driver), got); err != nil {
		t.Errorf("runtime %s: %v", driver.Name, err)
		return
	}
	t.Logf("runtime %s, provisioned across the outage, is %s after it (retry %+v)", got.Name, got.Status.State, got.Status.Retry)
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		for _, d := range r.find(match{runtimeID: runtimeID(driver), status: "firing", since: began}) {
			t.Logf("%s was notified of %s of %s %s after the outage began, %s before %s muted it",
				r.name, d.alert.Labels["alertname"], driver.Name, d.at.Sub(began).Round(100*time.Millisecond),
				inhibiting.Sub(d.at).Round(100*time.Millisecond), alertGardener)
		}
	}
}

// testManagerDown stops the manager: its metrics endpoint goes away, up{job} turns 0, and
// InfrastructureManagerDown reaches both receivers. It must run last.
func testManagerDown(t *testing.T, tm *timings) {
	stopped := time.Now()
	if err := sys.stopManager(); err != nil {
		t.Errorf("manager ended with: %v", err)
	}
	if ok, _ := httpOK(t.Context(), "http://"+sys.metricsAddr+"/metrics"); ok {
		t.Errorf("the metrics endpoint %s still answers after the manager stopped", sys.metricsAddr)
	}
	rule := shippedAlert(t, alertManagerDown)
	for _, r := range []*receiver{sys.oncall, sys.devteam} {
		d := waitDelivery(t, r, match{alertname: alertManagerDown, status: "firing", since: stopped}, 90*time.Second)
		tm.add(t, "manager-stopped->"+r.name, d.at.Sub(stopped))
		for k, v := range rule.Labels {
			if d.alert.Labels[k] != v {
				t.Errorf("%s: label %s: got %q, want %q", r.name, k, d.alert.Labels[k], v)
			}
		}
		if d.alert.Annotations["runbook_url"] != rule.Annotations["runbook_url"] {
			t.Errorf("%s: runbook_url: got %q, want %q", r.name, d.alert.Annotations["runbook_url"], rule.Annotations["runbook_url"])
		}
	}
	reportFalseResolves(t, stopped)
}

// reportFalseResolves fails for every per-runtime alert reported resolved after the manager
// stopped although its runtime is still Failed. Once the manager is gone, its runtime_failed
// series go stale, so the per-runtime alerts end after keep_firing_for (5m shipped);
// InfrastructureManagerDown (for: 3m shipped) must fire and inhibit them first, or on-call is
// told that a still-broken runtime recovered.
func reportFalseResolves(t *testing.T, stopped time.Time) {
	t.Helper()
	list := &infrav1.RuntimeList{}
	if err := sys.env.Client.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	for _, rt := range list.Items {
		if !isFailed(&rt) {
			continue
		}
		for _, r := range []*receiver{sys.oncall, sys.devteam} {
			for _, d := range r.find(match{runtimeID: runtimeID(&rt), status: "resolved", since: stopped}) {
				t.Errorf("%s was told at %s that %s of runtime %s resolved, but the runtime is still Failed "+
					"(keep_firing_for ended before InfrastructureManagerDown muted it)",
					r.name, d.at.Format("15:04:05.000"), d.alert.Labels["alertname"], rt.Name)
			}
		}
	}
}

// checkRuntimeAlert checks a per-runtime alert: the rule's static labels, the runtime's labels,
// want (label values), the runbook, and a description that names the runtime.
func checkRuntimeAlert(t *testing.T, receiver string, a webhookAlert, rule rulesRule, rt *infrav1.Runtime, want map[string]string) {
	t.Helper()
	want = maps.Clone(want)
	maps.Copy(want, rule.Labels)
	want["runtime_id"], want["runtime_name"], want["shoot"] = runtimeID(rt), rt.Name, rt.Spec.Shoot.Name
	for k, v := range want {
		if a.Labels[k] != v {
			t.Errorf("%s: %s label %s: got %q, want %q", receiver, rule.Alert, k, a.Labels[k], v)
		}
	}
	if got := a.Annotations["runbook_url"]; got == "" || got != rule.Annotations["runbook_url"] {
		t.Errorf("%s: %s runbook_url: got %q, want %q", receiver, rule.Alert, got, rule.Annotations["runbook_url"])
	}
	for _, k := range []string{"summary", "description"} {
		if !strings.Contains(a.Annotations[k], rt.Name) {
			t.Errorf("%s: %s %s does not name runtime %s: %q", receiver, rule.Alert, k, rt.Name, a.Annotations[k])
		}
	}
}

// checkPlatformAlert checks an alert about the manager or its dependencies: the rule's static
// labels, its runbook, and that Prometheus raised it (a generator URL).
func checkPlatformAlert(t *testing.T, receiver string, a webhookAlert, rule rulesRule) {
	t.Helper()
	for k, v := range rule.Labels {
		if a.Labels[k] != v {
			t.Errorf("%s: %s label %s: got %q, want %q", receiver, rule.Alert, k, a.Labels[k], v)
		}
	}
	if got := a.Annotations["runbook_url"]; got == "" || got != rule.Annotations["runbook_url"] {
		t.Errorf("%s: %s runbook_url: got %q, want %q", receiver, rule.Alert, got, rule.Annotations["runbook_url"])
	}
	if a.GeneratorURL == "" {
		t.Errorf("%s: %s has no generator URL: Prometheus did not raise it", receiver, rule.Alert)
	}
}

// resolveTimeout bounds how long an alert takes to resolve after its cause has gone: the longest
// range window of its expression (kept as shipped, so the expression sees the cause that much
// longer), its scaled keep_firing_for, and alertTimeout for evaluation and delivery.
func resolveTimeout(t *testing.T, rule rulesRule) time.Duration {
	t.Helper()
	var window time.Duration
	for _, m := range rangeWindow.FindAllStringSubmatch(rule.Expr, -1) {
		d, err := parseDuration(m[1])
		if err != nil {
			t.Fatalf("%s: range %s: %v", rule.Alert, m[0], err)
		}
		window = max(window, d)
	}
	var keep time.Duration
	if rule.KeepFiringFor != "" {
		d, err := parseDuration(rule.KeepFiringFor)
		if err != nil {
			t.Fatalf("%s: keep_firing_for: %v", rule.Alert, err)
		}
		keep = scaled(d)
	}
	return window + keep + alertTimeout
}

// rangeWindow matches the range of a range-vector selector, such as [5m].
var rangeWindow = regexp.MustCompile(`\[(\d+[a-z]+)\]`)

// waitForQuery polls Prometheus until the instant query returns a series, and returns when it
// first did.
func waitForQuery(t *testing.T, what, expr string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	err := testenv.Eventually(t.Context(), timeout, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		got, err := promQuery(ctx, sys.promURL, expr)
		at = time.Now()
		return len(got) > 0, err
	})
	if err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
	return at
}

// promValue returns the value of an instant query that yields at most one series; 0 without one.
func promValue(t *testing.T, expr string) float64 {
	t.Helper()
	got, err := promQuery(t.Context(), sys.promURL, expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		return 0
	}
	if len(got) > 1 {
		t.Fatalf("%s: got %d series, want one", expr, len(got))
	}
	s, _ := got[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: value %v: %v", expr, got[0].Value, err)
	}
	return v
}

// shippedAlert returns the shipped alerting rule called name.
func shippedAlert(t *testing.T, name string) rulesRule {
	t.Helper()
	f, err := readShippedRules()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := f.alert(name)
	if !ok {
		t.Fatalf("the shipped rules have no alert %s", name)
	}
	return r
}

// waitDelivery waits until the receiver has got an alert that matches, and returns the first.
func waitDelivery(t *testing.T, r *receiver, m match, timeout time.Duration) delivery {
	t.Helper()
	var got delivery
	err := testenv.Eventually(t.Context(), timeout, 50*time.Millisecond, func(context.Context) (bool, error) {
		ds := r.find(m)
		if len(ds) > 0 {
			got = ds[0]
		}
		return len(ds) > 0, nil
	})
	if err != nil {
		t.Fatalf("%s: nothing with %s arrived within %s: %v\n%s\nalertmanager:\n%s",
			r.name, m, timeout, err, r.dump(), sys.mon.Alertmanager.LogTail(10))
	}
	return got
}

// assertSilent fails when any of the receivers gets an alert that matches, within window from
// now (a window of zero checks once). It returns early on the first match.
func assertSilent(t *testing.T, window time.Duration, m match, receivers ...*receiver) {
	t.Helper()
	deadline := time.Now().Add(window)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, r := range receivers {
			if got := r.find(m); len(got) > 0 {
				t.Errorf("%s got %s, want nothing with %s", r.name, got[0], m)
				return
			}
		}
		if !time.Now().Before(deadline) {
			return
		}
		select {
		case <-t.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// timings collects the measured latencies of a run.
type timings struct {
	mu      sync.Mutex
	entries []string
}

// add records and logs one latency.
func (tm *timings) add(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("timing: %s %s", what, d.Round(100*time.Millisecond))
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.entries = append(tm.entries, fmt.Sprintf("%s %.1fs", what, d.Seconds()))
}

// summary is one line with every latency, in the order measured.
func (tm *timings) summary() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return "e2e: " + strings.Join(tm.entries, ", ")
}
