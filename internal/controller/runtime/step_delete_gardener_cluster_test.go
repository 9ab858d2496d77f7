package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
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
		// reason says why the case exists.
		reason string
		// gc is the GardenerCluster of rt's runtime id (rid-rt), nil for none.
		gc *infrav1.GardenerCluster
		// secret is its kubeconfig Secret, nil for none.
		secret func(rt *infrav1.Runtime) *corev1.Secret
		faults []fault
		want   fsmtest.Result
		// writes are the kcp writes; gcStays and secretStays say what is left of gc and secret.
		writes               []string
		gcStays, secretStays bool
	}{
		{
			name:   "deletes the Runtime's GardenerCluster and its kubeconfig Secret",
			reason: "a deleted Runtime's credentials to its cluster must not outlive it",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			want:   fsmtest.Next(StepDeleteShoot), writes: []string{"delete GardenerCluster", "delete Secret"},
		},
		{
			name:   "deletes upstream's GardenerCluster of the Runtime's shoot and its Secret",
			reason: "an adopted Runtime's GardenerCluster carries upstream's labels, not ours",
			gc:     upstreamGC,
			secret: upstreamSecret,
			want:   fsmtest.Next(StepDeleteShoot), writes: []string{"delete GardenerCluster", "delete Secret"},
		},
		{
			name:   "the Secret of the Runtime's own GardenerCluster goes whatever Runtime it names",
			reason: "the GardenerCluster decides whose Secret it is, not the Secret's label",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, "first", runtimeKubeconfig) },
			want:   fsmtest.Next(StepDeleteShoot), writes: []string{"delete GardenerCluster", "delete Secret"},
		},
		{
			name:   "a GardenerCluster another Runtime holds stays, with its Secret",
			reason: "a Runtime must never delete another Runtime's access to its cluster",
			gc:     testGardenerCluster("rid-rt", "first"),
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, "first", runtimeKubeconfig) },
			want:   fsmtest.Next(StepDeleteShoot), gcStays: true, secretStays: true,
		},
		{
			name:   "a GardenerCluster another Runtime holds keeps even a Secret labelled for this one",
			reason: "the holder of the GardenerCluster outranks the Secret's label",
			gc:     testGardenerCluster("rid-rt", "first"),
			secret: reachable,
			want:   fsmtest.Next(StepDeleteShoot), gcStays: true, secretStays: true,
		},
		{
			name:   "without a GardenerCluster, the Secret of another Runtime stays",
			reason: "without a GardenerCluster the Secret's label decides, and it names another Runtime",
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, "first", runtimeKubeconfig) },
			want:   fsmtest.Next(StepDeleteShoot), secretStays: true,
		},
		{
			name:   "without a GardenerCluster, the Runtime's own Secret goes",
			reason: "a Secret left by an interrupted deletion is still cleaned up",
			secret: reachable,
			want:   fsmtest.Next(StepDeleteShoot), writes: []string{"delete Secret"},
		},
		{
			name:   "without a GardenerCluster, a Secret the GardenerCluster controller did not create stays",
			reason: "only Secrets that controller created are ours to delete",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				delete(s.Labels, infrav1.LabelKymaManagedBy)
				return s
			},
			want: fsmtest.Next(StepDeleteShoot), secretStays: true,
		},
		{
			name:   "nothing there moves on",
			reason: "a deletion that finds nothing must not fail, so it can be repeated",
			want:   fsmtest.Next(StepDeleteShoot),
		},
		{
			name:    "a GardenerCluster that cannot be read fails",
			reason:  "a step that cannot see the holder must not delete blind",
			gc:      testGardenerCluster("rid-rt", "rt"),
			secret:  reachable,
			faults:  []fault{{store: "kcp", verb: "get", kind: "GardenerCluster", err: unavailable(), times: 1}},
			want:    fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			gcStays: true, secretStays: true,
		},
		{
			name:   "a failed delete of the GardenerCluster fails and keeps the Secret",
			reason: "the Secret goes after its GardenerCluster, which would otherwise write it again",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "delete", kind: "GardenerCluster", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"delete GardenerCluster"}, gcStays: true, secretStays: true,
		},
		{
			name:   "a failed delete of the Secret fails",
			reason: "a failed delete is retried, not taken for done",
			gc:     testGardenerCluster("rid-rt", "rt"),
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "delete", kind: "Secret", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"delete GardenerCluster", "delete Secret"}, secretStays: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
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

			fsmtest.Check(t, out, tt.want)
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
