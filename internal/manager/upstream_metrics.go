package manager

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// upstreamMetrics exports the per-object metrics upstream's manager exports, under its names
// and label names (upstream's internal/controller/metrics: runtimeId, runtimeName, shoot, ...), so dashboards built on them keep working. It reads the Runtimes and
// GardenerClusters from the manager's cache at each scrape; before the cache has synced it
// exports nothing.
type upstreamMetrics struct {
	reader             client.Reader
	lifetime, rotation time.Duration

	runtimeState, clusterState, kubeconfigExpiration *prometheus.Desc
}

func newUpstreamMetrics(reader client.Reader, lifetime time.Duration, rotateAfter float64) *upstreamMetrics {
	return &upstreamMetrics{
		reader:   reader,
		lifetime: lifetime,
		rotation: time.Duration(float64(lifetime) * rotateAfter),
		runtimeState: prometheus.NewDesc("infrastructure_manager_im_runtime_state",
			"Exposes current Status.state for Runtime CRs (upstream's metric)",
			[]string{"runtimeId", "runtimeName", "shoot", "provider", "state", "message"}, nil),
		clusterState: prometheus.NewDesc("infrastructure_manager_im_gardener_clusters_state",
			"Indicates the Status.state for GardenerCluster CRs (upstream's metric)",
			[]string{"runtimeId", "shoot", "state", "reason"}, nil),
		kubeconfigExpiration: prometheus.NewDesc("infrastructure_manager_im_kubeconfig_expiration",
			"Exposes current kubeconfig expiration value in epoch timestamp value format (upstream's metric)",
			[]string{"runtimeId", "shoot", "expires", "rotationDuration", "expirationDuration"}, nil),
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
	if err := m.reader.List(ctx, &runtimes); err == nil {
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
	if err := m.reader.List(ctx, &clusters); err != nil {
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
