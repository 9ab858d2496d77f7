package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestDeleteAuthentication covers the deletion of the shoot's structured authentication
// ConfigMap once the shoot is gone: the Runtime's own or upstream's goes, another Runtime's stays.
func TestDeleteAuthentication(t *testing.T) {
	authConfig := func(rt *infrav1.Runtime, labels map[string]string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{Data: map[string]string{gardener.AuthenticationConfigKey: "configuration"}}
		cm.Name, cm.Namespace = gardener.AuthenticationConfigName(rt.Spec.Shoot.Name), testProject
		cm.Labels = labels
		return cm
	}
	tests := []struct {
		name string
		// labels are the labels of the ConfigMap in the garden; absent leaves it out.
		labels func(rt *infrav1.Runtime) map[string]string
		absent bool
		faults []fault
		want   string
		class  retry.Class
		reason string
		// writes are the garden writes; stays says the ConfigMap is still there afterwards.
		writes []string
		stays  bool
	}{
		{
			name:   "a ConfigMap that is gone moves on",
			absent: true,
			want:   "Next(RemoveFinalizer)",
		},
		{
			name:   "the Runtime's ConfigMap goes",
			labels: ownerLabels,
			want:   "Next(RemoveFinalizer)", writes: []string{"delete ConfigMap"},
		},
		{
			name: "upstream's ConfigMap, without owner labels, goes",
			want: "Next(RemoveFinalizer)", writes: []string{"delete ConfigMap"},
		},
		{
			name: "a ConfigMap labelled for another Runtime stays",
			labels: func(rt *infrav1.Runtime) map[string]string {
				return map[string]string{LabelRuntimeName: "first", LabelRuntimeNamespace: rt.Namespace}
			},
			want: "Next(RemoveFinalizer)", stays: true,
		},
		{
			name:   "a ConfigMap that cannot be read fails",
			labels: ownerLabels,
			faults: []fault{{store: "garden", verb: "get", kind: "ConfigMap", err: unavailable()}},
			want:   "Fail(get authentication configuration structured-auth-config-rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			stays: true,
		},
		{
			name:   "a failed delete fails",
			labels: ownerLabels,
			faults: []fault{{store: "garden", verb: "delete", kind: "ConfigMap", err: unavailable()}},
			want:   "Fail(delete authentication configuration structured-auth-config-rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			writes: []string{"delete ConfigMap"}, stays: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			var objs []client.Object
			if !tt.absent {
				var labels map[string]string
				if tt.labels != nil {
					labels = tt.labels(rt)
				}
				objs = append(objs, authConfig(rt, labels))
			}
			w := newWorld(t, objs...)
			w.fail(tt.faults...)

			out := w.steps.deleteAuthentication(t.Context(), rt)

			checkOutcome(t, out, tt.want, tt.class, tt.reason)
			checkWrites(t, w, "garden", tt.writes...)
			w.heal()
			if gone := w.absent(w.garden, authConfig(rt, nil)); gone == tt.stays {
				t.Errorf("ConfigMap stays %t, want %t", !gone, tt.stays)
			}
		})
	}
}
