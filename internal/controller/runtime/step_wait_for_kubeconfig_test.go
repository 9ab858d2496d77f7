package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestWaitForKubeconfig covers the wait for the GardenerCluster controller's kubeconfig Secret:
// only a Secret it owns and filled moves on, one it does not own is refused for good.
func TestWaitForKubeconfig(t *testing.T) {
	tests := []struct {
		name string
		// secret is the Secret of rt's runtime id in kcp, nil for none.
		secret func(rt *infrav1.Runtime) *corev1.Secret
		faults []fault
		want   string
		class  retry.Class
		reason string
		// ready says rt has ConditionKubeconfigReady true afterwards.
		ready bool
		// shootUID is the uid of rt's shoot in the garden, no shoot when empty.
		shootUID types.UID
		// writes are the step's writes to kcp; rotation says it asked for a new kubeconfig.
		writes   []string
		rotation bool
	}{
		{
			name: "waits while there is no Secret",
			want: "Wait(30s, the kubeconfig Secret kubeconfig-rid-rt does not exist yet)",
		},
		{
			name: "a Secret the GardenerCluster controller did not create is refused",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Labels = map[string]string{LabelRuntimeName: rt.Name}
				return s
			},
			want:  "Fail(" + gardenercluster.ReasonSecretNotOwned + ": the Secret kcp-system/kubeconfig-rid-rt is not the kubeconfig Secret",
			class: retry.ClassTerminal, reason: gardenercluster.ReasonSecretNotOwned,
		},
		{
			name: "a Secret the controller created for another GardenerCluster is refused",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Labels[infrav1.LabelClusterName] = "rid-other"
				return s
			},
			want:  "Fail(" + gardenercluster.ReasonSecretNotOwned + ": ",
			class: retry.ClassTerminal, reason: gardenercluster.ReasonSecretNotOwned,
		},
		{
			name:   "waits while the owned Secret is empty",
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, rt.Name, "") },
			want:   "Wait(30s, the kubeconfig Secret kubeconfig-rid-rt is empty)",
		},
		{
			name:   "an owned Secret with the kubeconfig moves on",
			secret: reachable,
			want:   "Next(ConfigureOIDC)", ready: true,
		},
		{
			name: "a kubeconfig issued for another shoot is not used: a new one is asked for",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Annotations[gardenercluster.AnnotationShoot] = "other"
				return s
			},
			want:   "Wait(30s, the kubeconfig in Secret kubeconfig-rid-rt was issued for shoot other, not for shoot rt",
			writes: []string{"patch GardenerCluster"}, rotation: true,
		},
		{
			name: "a kubeconfig of an earlier shoot of the same name is not used",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Annotations[gardenercluster.AnnotationShootUID] = "uid-before"
				return s
			},
			shootUID: "uid-now",
			want:     "Wait(30s, the kubeconfig in Secret kubeconfig-rid-rt was issued for an earlier shoot rt (uid uid-before)",
			writes:   []string{"patch GardenerCluster"}, rotation: true,
		},
		{
			name: "a kubeconfig of the shoot as it is now is used",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Annotations[gardenercluster.AnnotationShootUID] = "uid-now"
				return s
			},
			shootUID: "uid-now",
			want:     "Next(ConfigureOIDC)", ready: true,
		},
		{
			name:   "a Secret that cannot be read fails",
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "get", kind: "Secret", err: unavailable()}},
			want:   "Fail(get kubeconfig secret: ", class: retry.ClassTransient, reason: retry.ReasonServiceUnavailable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			rt.Labels[infrav1.LabelRuntimeID] = "rid-rt"
			objs := []client.Object{testGardenerCluster("rid-rt", rt.Name)}
			if tt.secret != nil {
				objs = append(objs, tt.secret(rt))
			}
			if tt.shootUID != "" {
				shoot := testShoot(rt)
				shoot.UID = tt.shootUID
				objs = append(objs, shoot)
			}
			w := newWorld(t, objs...)
			w.fail(tt.faults...)

			out := w.steps.waitForKubeconfig(t.Context(), rt)

			checkOutcome(t, out, tt.want, tt.class, tt.reason)
			if got := conditionTrue(rt, infrav1.ConditionKubeconfigReady); got != tt.ready {
				t.Errorf("%s true %t, want %t", infrav1.ConditionKubeconfigReady, got, tt.ready)
			}
			checkWrites(t, w, "kcp", tt.writes...)
			gc := testGardenerCluster("rid-rt", rt.Name)
			w.get(w.kcp, gc)
			if _, asked := gc.Annotations[infrav1.AnnotationForceKubeconfigRotation]; asked != tt.rotation {
				t.Errorf("GardenerCluster asked for a rotation: %t, want %t", asked, tt.rotation)
			}
		})
	}
}
