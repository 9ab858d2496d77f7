package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// p2Result is one outage run.
type p2Result struct {
	policy policy
	n      int
	outage time.Duration
	// rate is Gardener requests per second, second by second, from lead before the outage
	// began until the run ended.
	rate []float64
	lead time.Duration
	// Peak (of one second and of 10-second means) and mean rates during the outage and in the
	// minute after it.
	peakDuring, peak10During, meanDuring float64
	peakAfter, peak10After, meanAfter    float64
	// failed counts the Runtimes that were ever Failed.
	failed int
	// runtimeAlerts counts the per-runtime alerts (alerts with a runtime_id label) that the
	// shipped rules raised, pending or firing, by alert name; sharedAlerts the others, by name,
	// with the furthest state they reached.
	runtimeAlerts map[string]int
	sharedAlerts  map[string]string
	// recovered is whether every Runtime was Ready within the run's timeout after the outage;
	// recovery is the time from the outage's end to the last Ready.
	recovered bool
	recovery  time.Duration
	readyAt   int
}

// outageLead is how much of the time before the outage the rate series shows.
const outageLead = 20 * time.Second

// runP2 creates n Runtimes, waits until each has its shoot (they are in flight, their shoots
// being created), makes Gardener answer 503 to everything for the outage, and waits for all to
// be Ready after it. A real Prometheus with the shipped rules scrapes the manager throughout.
func (s *suite) runP2(ctx context.Context, p profile, r run) (p2Result, error) {
	res := p2Result{policy: r.policy, n: p.P2Runtimes, outage: p.P2Outage, lead: outageLead}
	if err := s.plane.CreateNamespace(ctx, r.name); err != nil {
		return res, err
	}
	runtimes, err := generate(r, 0, res.n)
	if err != nil {
		return res, err
	}
	t, err := s.track(ctx, r.name)
	if err != nil {
		return res, err
	}
	defer t.stop()
	m, err := s.startManager(ctx, r)
	if err != nil {
		return res, err
	}
	defer func() { _ = m.stop() }()
	mon, err := s.startPrometheus(ctx, r, m)
	if err != nil {
		return res, err
	}
	defer func() { _ = mon.Stop() }()
	monStart := time.Now()
	if err := s.create(ctx, runtimes); err != nil {
		return res, err
	}
	// Creating the shoots sets the scene; it is not measured. At the baseline's 5 QPS, with a
	// request for every read, 200 creations take about four minutes: the baseline's cut, which
	// bounds its measured waits, is too short here.
	if err := s.waitForShoots(ctx, r, res.n, p.RunTimeout); err != nil {
		return res, err
	}
	outage := []fault.Rule{{Name: "gardener-down", Fault: fault.Fault{Type: fault.TypeStatus, Codes: []int{503}},
		For: &metav1.Duration{Duration: res.outage}}}
	began := time.Now()
	if err := s.setFaults(ctx, outage); err != nil {
		return res, err
	}
	ended := began.Add(res.outage)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(res.outage):
	}
	if err := s.setFaults(ctx, nil); err != nil {
		return res, err
	}
	ok, end := t.waitFor(ctx, res.n, p.timeout(r.policy), isReady)
	res.recovered, res.recovery, res.readyAt = ok, end.Sub(ended), t.readyNow()
	// At least the minute after the outage, for its rates.
	if wait := time.Until(ended.Add(time.Minute)); wait > 0 {
		time.Sleep(wait)
		end = time.Now()
	}
	res.failed = t.failedCount()
	if err := s.log.sync(ctx); err != nil {
		return res, err
	}
	res.rate = perSecond(s.log.between(began.Add(-outageLead), end), began.Add(-outageLead), end)
	during := res.rate[int(outageLead.Seconds()):min(len(res.rate), int((outageLead+res.outage).Seconds()))]
	afterFrom := int((outageLead + res.outage).Seconds())
	after := res.rate[min(afterFrom, len(res.rate)):min(len(res.rate), afterFrom+60)]
	res.peakDuring, res.peak10During, res.meanDuring = peak(during, 1), peak(during, 10), mean(during)
	res.peakAfter, res.peak10After, res.meanAfter = peak(after, 1), peak(after, 10), mean(after)
	// The last rule evaluation sees the last scrape: give Prometheus one interval.
	time.Sleep(6 * time.Second)
	res.runtimeAlerts, res.sharedAlerts, err = alertsSince(ctx, mon.PrometheusURL, time.Since(monStart))
	return res, err
}

// waitForShoots waits until the run's project holds n shoots.
func (s *suite) waitForShoots(ctx context.Context, r run, n int, timeout time.Duration) error {
	return poll(ctx, timeout, time.Second, func(ctx context.Context) (bool, error) {
		shoots := &gardencorev1beta1.ShootList{}
		if err := s.garden.List(ctx, shoots, client.InNamespace(gardensim.ProjectNamespace(r.name))); err != nil {
			return false, nil //nolint:nilerr // the next poll tries again
		}
		return len(shoots.Items) >= n, nil
	})
}

// startPrometheus runs a real Prometheus with the shipped rules, scraping the manager.
func (s *suite) startPrometheus(ctx context.Context, r run, m *managerProc) (*stack.Monitoring, error) {
	prom, _ := stack.FindMonitoring()
	if prom == "" {
		return nil, fmt.Errorf("no Prometheus: set PROMETHEUS or run make monitoring-tools")
	}
	return stack.StartMonitoring(ctx, stack.MonitoringOptions{
		Prometheus:  prom,
		RulesFile:   filepath.Join(testenv.RepoRoot(), "config", "prometheus", "rules.yaml"),
		MetricsAddr: m.metrics,
		Dir:         filepath.Join(s.dir, "monitoring-"+r.name),
	})
}

// alertsSince asks Prometheus which alerts were pending or firing within the last window.
func alertsSince(ctx context.Context, promURL string, window time.Duration) (map[string]int, map[string]string, error) {
	q := fmt.Sprintf(`max_over_time(ALERTS[%ds])`, int(window.Seconds())+1)
	body, err := httpBody(ctx, promURL+"/api/v1/query?query="+url.QueryEscape(q), 30*time.Second)
	if err != nil {
		return nil, nil, fmt.Errorf("query alerts: %w", err)
	}
	var reply struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &reply); err != nil || reply.Status != "success" {
		return nil, nil, fmt.Errorf("query alerts: %s: %w", body, err)
	}
	perRuntime, shared := map[string]int{}, map[string]string{}
	seen := map[string]bool{}
	for _, res := range reply.Data.Result {
		name, state, id := res.Metric["alertname"], res.Metric["alertstate"], res.Metric["runtime_id"]
		if name == "Watchdog" {
			continue
		}
		if id == "" {
			if shared[name] != "firing" {
				shared[name] = state
			}
			continue
		}
		if key := name + "/" + id; !seen[key] {
			seen[key] = true
			perRuntime[name]++
		}
	}
	return perRuntime, shared, nil
}
