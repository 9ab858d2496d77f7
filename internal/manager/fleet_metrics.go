package manager

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// fleetMetrics exports the series of each Runtime and GardenerCluster that a scrape reads from
// the manager's cache: when each stored admin kubeconfig expires (the GardenerCluster's
// status.kubeconfigExpiresAt), and the per-object metrics upstream's manager exports, which
// keep upstream's names and label names, so dashboards built on them keep working. The metrics
// package declares them.
//
// Series read at the scrape cost no memory between scrapes; a gauge per runtime, set by the
// controller, held about 800 bytes each. What a scrape allocates is what it must keep cheap:
// the registry gathers every series before it writes the first, so at 5,000 runtimes all
// 20,000 of them are alive at once, on top of the caches. So the collector reads the cached
// objects themselves, not copies (fleetSource), and builds its series without the generic
// const metrics: a label pair whose value repeats across the fleet (a provider, a state, a
// message) is one pair for every series that carries it (scrape). Before the cache has synced,
// it exports nothing.
type fleetMetrics struct {
	fleet              fleetSource
	lifetime, rotation time.Duration

	kubeconfigExpiration                 fleetGauge
	runtimeState, clusterState, upstream fleetGauge
}

// fleetSource hands a scrape the cached Runtimes and GardenerClusters themselves, in the
// cache's stored forms: the scrape only reads them. ok is false while the cache has not
// synced.
type fleetSource interface {
	Runtimes() (runtimes []*runtimectrl.StoredRuntime, ok bool)
	Clusters() (clusters []*storedCluster, ok bool)
}

func newFleetMetrics(fleet fleetSource, m *metrics.Metrics, lifetime time.Duration, rotateAfter float64) *fleetMetrics {
	return &fleetMetrics{
		fleet:                fleet,
		lifetime:             lifetime,
		rotation:             time.Duration(float64(lifetime) * rotateAfter),
		kubeconfigExpiration: newFleetGauge(m.KubeconfigExpiration),
		runtimeState:         newFleetGauge(m.Upstream.RuntimeState, "provider", "state", "message"),
		clusterState:         newFleetGauge(m.Upstream.ClusterState, "state", "reason"),
		upstream:             newFleetGauge(m.Upstream.KubeconfigExpiration, "rotationDuration", "expirationDuration"),
	}
}

// Describe implements prometheus.Collector.
func (m *fleetMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range []*fleetGauge{&m.kubeconfigExpiration, &m.runtimeState, &m.clusterState, &m.upstream} {
		ch <- g.desc
	}
}

// Collect implements prometheus.Collector.
func (m *fleetMetrics) Collect(ch chan<- prometheus.Metric) {
	s := newScrape(ch)
	if runtimes, ok := m.fleet.Runtimes(); ok {
		for _, rt := range runtimes {
			id := rt.Label(infrav1.LabelRuntimeID)
			if id == "" {
				continue
			}
			spec, status := rt.Spec(), rt.Status()
			message := "No value"
			if c := meta.FindStatusCondition(status.Conditions, infrav1.ConditionReady); c != nil {
				message = c.Message
			}
			s.gauge(&m.runtimeState, 1, id, rt.Name, spec.Shoot.Name, spec.Shoot.Provider.Type, string(status.State), message)
		}
	}
	clusters, ok := m.fleet.Clusters()
	if !ok {
		return
	}
	rotation := strconv.FormatFloat(m.rotation.Seconds(), 'G', -1, 64)
	lifetime := strconv.FormatFloat(m.lifetime.Seconds(), 'G', -1, 64)
	for _, gc := range clusters {
		id, shoot := gc.Label(infrav1.LabelRuntimeID), gc.spec.Shoot.Name
		exp := gc.status.KubeconfigExpiresAt
		if exp != nil {
			// The controller sets it when it stores a kubeconfig, and when it finds one stored
			// (a takeover): it is the expiry of the kubeconfig in the Secret.
			s.gauge(&m.kubeconfigExpiration, float64(exp.Unix()), id, shoot)
		}
		if id != gc.Name {
			// Without a runtime id, or not named after it: no GardenerCluster the manager
			// serves (its controller says why). A copy under another name would repeat the
			// series of the one it copies, and one repeated series fails the whole scrape.
			continue
		}
		reason := ""
		if len(gc.status.Conditions) > 0 {
			reason = gc.status.Conditions[0].Reason
		}
		s.gauge(&m.clusterState, 1, id, shoot, string(gc.status.State), reason)
		if exp != nil {
			epoch := exp.Unix()
			s.gauge(&m.upstream, float64(epoch), id, shoot, strconv.FormatInt(epoch, 10), rotation, lifetime)
		}
	}
}

// fleetGauge is a gauge of the fleet, ready for scrapes: its label names, and the order in
// which a series lists its labels. The text a scrape writes wants them sorted by name, and the
// registry copies and sorts the labels of any series that has them otherwise.
type fleetGauge struct {
	desc *prometheus.Desc
	// names are the label names in the order of the values, one string that every pair
	// points to.
	names []*string
	// order are the indexes of the values, in the order of the names sorted.
	order []int
	// repeats says of each value whether it repeats across the fleet, so that one pair
	// serves every series with it.
	repeats []bool
}

func newFleetGauge(g metrics.ScrapedGauge, repeating ...string) fleetGauge {
	f := fleetGauge{desc: g.Desc}
	for i, name := range g.Labels {
		f.names = append(f.names, &g.Labels[i])
		f.order = append(f.order, i)
		f.repeats = append(f.repeats, slices.Contains(repeating, name))
	}
	slices.SortFunc(f.order, func(a, b int) int { return cmp.Compare(g.Labels[a], g.Labels[b]) })
	return f
}

// block is how many label pairs, values or label slots a scrape allocates at once.
const block = 512

// scrape builds the series of one scrape. The label pairs, their values and the series' label
// lists are cut from blocks instead of allocated one by one. The pairs of the values that
// repeat across the fleet are kept once, and a series shares the pairs it has in common with
// the one before it: the three series of a GardenerCluster name the same runtime and shoot.
type scrape struct {
	ch     chan<- prometheus.Metric
	shared map[sharedPair]*dto.LabelPair
	last   []*dto.LabelPair
	pairs  []dto.LabelPair
	values []string
	slots  []*dto.LabelPair
}

// sharedPair is a label pair whose value repeats across the fleet.
type sharedPair struct {
	name  *string
	value string
}

func newScrape(ch chan<- prometheus.Metric) *scrape {
	return &scrape{ch: ch, shared: map[sharedPair]*dto.LabelPair{}}
}

// gauge sends the series of g with value and the label values (in the order of g's names).
func (s *scrape) gauge(g *fleetGauge, value float64, values ...string) {
	labels := s.labels(len(values))
	for i, v := range g.order {
		labels[i] = s.pair(g.names[v], values[v], g.repeats[v])
	}
	s.last = labels
	s.ch <- &fleetSeries{desc: g.desc, labels: labels, value: value}
}

// pair returns a label pair of name and value: the one shared when the value repeats, or the
// last series' when it had the same.
func (s *scrape) pair(name *string, value string, repeats bool) *dto.LabelPair {
	if repeats {
		if p, ok := s.shared[sharedPair{name, value}]; ok {
			return p
		}
	} else {
		for _, p := range s.last {
			if *p.Name == *name && *p.Value == value {
				return p
			}
		}
	}
	if len(s.pairs) == cap(s.pairs) {
		s.pairs = make([]dto.LabelPair, 0, block)
	}
	if len(s.values) == cap(s.values) {
		s.values = make([]string, 0, block)
	}
	s.values = append(s.values, value)
	s.pairs = s.pairs[:len(s.pairs)+1]
	p := &s.pairs[len(s.pairs)-1]
	p.Name, p.Value = name, &s.values[len(s.values)-1]
	if repeats {
		s.shared[sharedPair{name, value}] = p
	}
	return p
}

// labels returns room for the n labels of one series.
func (s *scrape) labels(n int) []*dto.LabelPair {
	if cap(s.slots)-len(s.slots) < n {
		s.slots = make([]*dto.LabelPair, 0, max(block, n))
	}
	start := len(s.slots)
	s.slots = s.slots[:start+n]
	return s.slots[start : start+n : start+n]
}

// fleetSeries is one series of the fleet. The registry reads it once, into the series it
// writes; its labels are sorted by name and may be shared with other series, which the
// registry does not change.
type fleetSeries struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
	gauge  dto.Gauge
}

// Desc implements prometheus.Metric.
func (f *fleetSeries) Desc() *prometheus.Desc { return f.desc }

// Write implements prometheus.Metric.
func (f *fleetSeries) Write(m *dto.Metric) error {
	f.gauge.Value = &f.value
	m.Label, m.Gauge = f.labels, &f.gauge
	return nil
}
