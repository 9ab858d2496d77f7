package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
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
		// reason says why the case exists.
		reason string
		// labels are the labels of the ConfigMap in the garden; absent leaves it out.
		labels func(rt *infrav1.Runtime) map[string]string
		absent bool
		faults []fault
		want   fsmtest.Result
		// writes are the garden writes; stays says the ConfigMap is still there afterwards.
		writes []string
		stays  bool
	}{
		{
			name:   "a ConfigMap that is gone moves on",
			reason: "a deletion that finds nothing must not fail, so it can be repeated",
			absent: true,
			want:   fsmtest.Next(StepRemoveFinalizer),
		},
		{
			name:   "the Runtime's ConfigMap goes",
			reason: "a deleted Runtime leaves nothing behind in the garden",
			labels: ownerLabels,
			want:   fsmtest.Next(StepRemoveFinalizer), writes: []string{"delete ConfigMap"},
		},
		{
			name:   "upstream's ConfigMap, without owner labels, goes",
			reason: "an adopted Runtime's ConfigMap was written by upstream without our labels",
			want:   fsmtest.Next(StepRemoveFinalizer), writes: []string{"delete ConfigMap"},
		},
		{
			name:   "a ConfigMap labelled for another Runtime stays",
			reason: "a Runtime must never delete what another Runtime uses",
			labels: func(rt *infrav1.Runtime) map[string]string {
				return map[string]string{LabelRuntimeName: "first", LabelRuntimeNamespace: rt.Namespace}
			},
			want: fsmtest.Next(StepRemoveFinalizer), stays: true,
		},
		{
			name:   "a ConfigMap that cannot be read fails",
			reason: "a step that cannot see the owner labels must not delete blind",
			labels: ownerLabels,
			faults: []fault{{store: "garden", verb: "get", kind: "ConfigMap", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			stays:  true,
		},
		{
			name:   "a failed delete fails",
			reason: "a failed delete is retried, not taken for done",
			labels: ownerLabels,
			faults: []fault{{store: "garden", verb: "delete", kind: "ConfigMap", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"delete ConfigMap"}, stays: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
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

			fsmtest.Check(t, out, tt.want)
			checkWrites(t, w, "garden", tt.writes...)
			w.heal()
			if gone := w.absent(w.garden, authConfig(rt, nil)); gone == tt.stays {
				t.Errorf("ConfigMap stays %t, want %t", !gone, tt.stays)
			}
		})
	}
}
