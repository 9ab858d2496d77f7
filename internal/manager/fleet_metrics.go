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

// upstreamMetrics exports the per-object metrics upstream's manager exports. They keep
// upstream's names and label names, so dashboards built on them keep working. The metrics
// package declares them. The collector reads the Runtimes and GardenerClusters from the
// manager's cache at each scrape, without copying them: it only reads them, and copies of a
// fleet's objects at every scrape were tens of megabytes of garbage. Before the cache has
// synced, it exports nothing.
type upstreamMetrics struct {
	reader             client.Reader
	lifetime, rotation time.Duration

	runtimeState, clusterState, kubeconfigExpiration *prometheus.Desc
}

func newUpstreamMetrics(reader client.Reader, d metrics.Upstream, lifetime time.Duration, rotateAfter float64) *upstreamMetrics {
	return &upstreamMetrics{
		reader:               reader,
		lifetime:             lifetime,
		rotation:             time.Duration(float64(lifetime) * rotateAfter),
		runtimeState:         d.RuntimeState,
		clusterState:         d.ClusterState,
		kubeconfigExpiration: d.KubeconfigExpiration,
	}
}

// Describe implements prometheus.Collector.
func (m *upstreamMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.runtimeState
	ch <- m.clusterState
	ch <- m.kubeconfigExpiration
}

// Collect implements prometheus.Collector.
func (m *upstreamMetrics) Collect(ch chan<- prometheus.Metric) {
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
			ch <- prometheus.MustNewConstMetric(m.runtimeState, prometheus.GaugeValue, 1,
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
		if id == "" {
			continue
		}
		reason := ""
		if len(gc.Status.Conditions) > 0 {
			reason = gc.Status.Conditions[0].Reason
		}
		ch <- prometheus.MustNewConstMetric(m.clusterState, prometheus.GaugeValue, 1, id, gc.Spec.Shoot.Name, string(gc.Status.State), reason)
		if exp := gc.Status.KubeconfigExpiresAt; exp != nil {
			epoch := exp.Unix()
			ch <- prometheus.MustNewConstMetric(m.kubeconfigExpiration, prometheus.GaugeValue, float64(epoch),
				id, gc.Spec.Shoot.Name, strconv.FormatInt(epoch, 10),
				strconv.FormatFloat(m.rotation.Seconds(), 'G', -1, 64), strconv.FormatFloat(m.lifetime.Seconds(), 'G', -1, 64))
		}
	}
}
