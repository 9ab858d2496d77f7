package manager

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// fleetMetrics exports the series of each Runtime and GardenerCluster that a scrape reads from
// the manager's cache: when each stored admin kubeconfig expires (the GardenerCluster's
// status.kubeconfigExpiresAt), and the per-object metrics upstream's manager exports, which
// keep upstream's names and label names, so dashboards built on them keep working. The metrics
// package declares them. The collector reads the cache without copying: it only reads, and
// copies of a fleet's objects at every scrape were tens of megabytes of garbage. Series read at
// the scrape cost no memory between scrapes; a gauge per runtime, set by the controller, held
// about 800 bytes each. Before the cache has synced, it exports nothing.
type fleetMetrics struct {
	reader             client.Reader
	lifetime, rotation time.Duration

	kubeconfigExpiration *prometheus.Desc
	upstream             metrics.Upstream
}

func newFleetMetrics(reader client.Reader, m *metrics.Metrics, lifetime time.Duration, rotateAfter float64) *fleetMetrics {
	return &fleetMetrics{
		reader:               reader,
		lifetime:             lifetime,
		rotation:             time.Duration(float64(lifetime) * rotateAfter),
		kubeconfigExpiration: m.KubeconfigExpiration,
		upstream:             m.Upstream,
	}
}

// Describe implements prometheus.Collector.
func (m *fleetMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.kubeconfigExpiration
	ch <- m.upstream.RuntimeState
	ch <- m.upstream.ClusterState
	ch <- m.upstream.KubeconfigExpiration
}

// Collect implements prometheus.Collector.
func (m *fleetMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var runtimes infrav1.RuntimeList
	if err := m.reader.List(ctx, &runtimes, client.UnsafeDisableDeepCopy); err == nil {
		for i := range runtimes.Items {
			rt := &runtimes.Items[i]
			id := rt.Labels[infrav1.LabelRuntimeID]
			if id == "" {
				continue
			}
			message := "No value"
			if c := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady); c != nil {
				message = c.Message
			}
			ch <- prometheus.MustNewConstMetric(m.upstream.RuntimeState, prometheus.GaugeValue, 1,
				id, rt.Name, rt.Spec.Shoot.Name, rt.Spec.Shoot.Provider.Type, string(rt.Status.State), message)
		}
	}
	var clusters infrav1.GardenerClusterList
	if err := m.reader.List(ctx, &clusters, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range clusters.Items {
		gc := &clusters.Items[i]
		id := gc.Labels[infrav1.LabelRuntimeID]
		if exp := gc.Status.KubeconfigExpiresAt; exp != nil {
			// The controller sets it when it stores a kubeconfig, and when it finds one stored
			// (a takeover): it is the expiry of the kubeconfig in the Secret.
			ch <- prometheus.MustNewConstMetric(m.kubeconfigExpiration, prometheus.GaugeValue, float64(exp.Unix()),
				id, gc.Spec.Shoot.Name)
		}
		if id == "" {
			continue
		}
		reason := ""
		if len(gc.Status.Conditions) > 0 {
			reason = gc.Status.Conditions[0].Reason
		}
		ch <- prometheus.MustNewConstMetric(m.upstream.ClusterState, prometheus.GaugeValue, 1, id, gc.Spec.Shoot.Name, string(gc.Status.State), reason)
		if exp := gc.Status.KubeconfigExpiresAt; exp != nil {
			epoch := exp.Unix()
			ch <- prometheus.MustNewConstMetric(m.upstream.KubeconfigExpiration, prometheus.GaugeValue, float64(epoch),
				id, gc.Spec.Shoot.Name, strconv.FormatInt(epoch, 10),
				strconv.FormatFloat(m.rotation.Seconds(), 'G', -1, 64), strconv.FormatFloat(m.lifetime.Seconds(), 'G', -1, 64))
		}
	}
}
