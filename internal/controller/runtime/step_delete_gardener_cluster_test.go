package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestDeleteGardenerCluster covers the deletion of the GardenerCluster of the runtime id and its
// kubeconfig Secret: only the Runtime's own go, another Runtime's stay.
func TestDeleteGardenerCluster(t *testing.T) {
	upstreamGC := testGardenerCluster("rid-rt", "rt")
	delete(upstreamGC.Labels, LabelRuntimeName)
	// upstreamSecret is the Secret of upstream's GardenerCluster, labelled with its shoot.
	upstreamSecret := func(rt *infrav1.Runtime) *corev1.Secret {
		s := reachable(rt)
		delete(s.Labels, LabelRuntimeName)
		s.Labels[infrav1.LabelShootName] = rt.Spec.Shoot.Name
		return s
	}
	tests := []struct {
		name string
		// gc is the GardenerCluster of rt's runtime id (rid-rt), nil for none.
		gc *infrav1.GardenerCluster
		// secret is its kubeconfig Secret, nil for none.
		secret func(rt *infrav1.Runtime) *corev1.Secret
		faults []fault
		want   string
		class  retry.Class
		reason string
		// writes are the kcp writes; gcStays and secretStays say what is left of gc and secret.
		writes               []string
		gcStays, secretStays bool
	}{
		{
			name:   "deletes the Runtime's GardenerCluster and its kubeconfig Secret",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			want:   "Next(DeleteShoot)", writes: []string{"delete GardenerCluster", "delete Secret"},
		},
		{
			name:   "deletes upstream's GardenerCluster of the Runtime's shoot and its Secret",
			gc:     upstreamGC,
			secret: upstreamSecret,
			want:   "Next(DeleteShoot)", writes: []string{"delete GardenerCluster", "delete Secret"},
		},
		{
			name:   "the Secret of the Runtime's own GardenerCluster goes whatever Runtime it names",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, "first", runtimeKubeconfig) },
			want:   "Next(DeleteShoot)", writes: []string{"delete GardenerCluster", "delete Secret"},
		},
		{
			name:   "a GardenerCluster another Runtime holds stays, with its Secret",
			gc:     testGardenerCluster("rid-rt", "first"),
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, "first", runtimeKubeconfig) },
			want:   "Next(DeleteShoot)", gcStays: true, secretStays: true,
		},
		{
			name:   "a GardenerCluster another Runtime holds keeps even a Secret labelled for this one",
			gc:     testGardenerCluster("rid-rt", "first"),
			secret: reachable,
			want:   "Next(DeleteShoot)", gcStays: true, secretStays: true,
		},
		{
			name:   "without a GardenerCluster, the Secret of another Runtime stays",
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, "first", runtimeKubeconfig) },
			want:   "Next(DeleteShoot)", secretStays: true,
		},
		{
			name:   "without a GardenerCluster, the Runtime's own Secret goes",
			secret: reachable,
			want:   "Next(DeleteShoot)", writes: []string{"delete Secret"},
		},
		{
			name: "without a GardenerCluster, a Secret the GardenerCluster controller did not create stays",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				delete(s.Labels, infrav1.LabelKymaManagedBy)
				return s
			},
			want: "Next(DeleteShoot)", secretStays: true,
		},
		{
			name: "nothing there moves on",
			want: "Next(DeleteShoot)",
		},
		{
			name:   "a GardenerCluster that cannot be read fails",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "get", kind: "GardenerCluster", err: unavailable(), times: 1}},
			want:   "Fail(get GardenerCluster rid-rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			gcStays: true, secretStays: true,
		},
		{
			name:   "a failed delete of the GardenerCluster fails and keeps the Secret",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "delete", kind: "GardenerCluster", err: unavailable()}},
			want:   "Fail(delete GardenerCluster rid-rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			writes: []string{"delete GardenerCluster"}, gcStays: true, secretStays: true,
		},
		{
			name:   "a failed delete of the Secret fails",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "delete", kind: "Secret", err: unavailable()}},
			want:   "Fail(delete kubeconfig secret kubeconfig-rid-rt: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
			writes: []string{"delete GardenerCluster", "delete Secret"}, secretStays: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			rt.Labels[infrav1.LabelRuntimeID] = "rid-rt"
			objs := []client.Object{rt}
			if tt.gc != nil {
				objs = append(objs, tt.gc.DeepCopy())
			}
			if tt.secret != nil {
				objs = append(objs, tt.secret(rt))
			}
			w := newWorld(t, objs...)
			w.fail(tt.faults...)

			out := w.steps.deleteGardenerCluster(t.Context(), rt)

			checkOutcome(t, out, tt.want, tt.class, tt.reason)
			checkWrites(t, w, "kcp", tt.writes...)
			w.heal()
			if gone := w.absent(w.kcp, testGardenerCluster("rid-rt", "")); tt.gc != nil && gone == tt.gcStays {
				t.Errorf("GardenerCluster stays %t, want %t", !gone, tt.gcStays)
			}
			if gone := w.absent(w.kcp, kubeconfigSecret(rt, "", "")); tt.secret != nil && gone == tt.secretStays {
				t.Errorf("kubeconfig Secret stays %t, want %t", !gone, tt.secretStays)
			}
		})
	}
}
