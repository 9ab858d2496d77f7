package runtime

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestWaitForKubeconfig covers the wait for the GardenerCluster controller's kubeconfig Secret:
// only a Secret it owns and filled moves on, one it does not own is refused for good.
func TestWaitForKubeconfig(t *testing.T) {
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// secret is the Secret of rt's runtime id in kcp, nil for none.
		secret func(rt *infrav1.Runtime) *corev1.Secret
		faults []fault
		want   fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// ready says rt has ConditionKubeconfigReady true afterwards.
		ready bool
		// shootUID is the uid of rt's shoot in the garden, no shoot when empty.
		shootUID types.UID
		// writes are the step's writes to kcp; rotation says it asked for a new kubeconfig.
		writes   []string
		rotation bool
	}{
		{
			name:   "waits while there is no Secret",
			reason: "the GardenerCluster controller writes the Secret later; the message names the Secret waited for",
			want:   fsmtest.Wait(30 * time.Second),
			says:   "the kubeconfig Secret kubeconfig-rid-rt does not exist yet",
		},
		{
			name:   "a Secret the GardenerCluster controller did not create is refused",
			reason: "a kubeconfig someone else wrote must not be trusted; the message names the Secret",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Labels = map[string]string{LabelRuntimeName: rt.Name}
				return s
			},
			want: fsmtest.Terminal(gardenercluster.ReasonSecretNotOwned),
			says: "the Secret kcp-system/kubeconfig-rid-rt is not the kubeconfig Secret",
		},
		{
			name:   "a Secret the controller created for another GardenerCluster is refused",
			reason: "a kubeconfig of another cluster must never be used for this one",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Labels[infrav1.LabelClusterName] = "rid-other"
				return s
			},
			want: fsmtest.Terminal(gardenercluster.ReasonSecretNotOwned),
		},
		{
			name:   "waits while the owned Secret is empty",
			reason: "an empty Secret is not yet filled; the message names the Secret",
			secret: func(rt *infrav1.Runtime) *corev1.Secret { return kubeconfigSecret(rt, rt.Name, "") },
			want:   fsmtest.Wait(30 * time.Second),
			says:   "the kubeconfig Secret kubeconfig-rid-rt is empty",
		},
		{
			name:   "an owned Secret with the kubeconfig moves on",
			reason: "the kubeconfig is ready once the owner filled it",
			secret: reachable,
			want:   fsmtest.Next(StepConfigureOIDC), ready: true,
		},
		{
			name:   "a kubeconfig issued for another shoot is not used: a new one is asked for",
			reason: "a kubeconfig of another shoot reaches the wrong cluster; the message names both shoots",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Annotations[gardenercluster.AnnotationShoot] = "other"
				return s
			},
			want:   fsmtest.Wait(30 * time.Second),
			says:   "the kubeconfig in Secret kubeconfig-rid-rt was issued for shoot other, not for shoot rt",
			writes: []string{"patch GardenerCluster"}, rotation: true,
		},
		{
			name:   "a kubeconfig of an earlier shoot of the same name is not used",
			reason: "a re-created shoot has a new API server; the message names the old uid",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Annotations[gardenercluster.AnnotationShootUID] = "uid-before"
				return s
			},
			shootUID: "uid-now",
			want:     fsmtest.Wait(30 * time.Second),
			says:     "the kubeconfig in Secret kubeconfig-rid-rt was issued for an earlier shoot rt (uid uid-before)",
			writes:   []string{"patch GardenerCluster"}, rotation: true,
		},
		{
			name:   "a kubeconfig of the shoot as it is now is used",
			reason: "a matching uid is the shoot's current kubeconfig",
			secret: func(rt *infrav1.Runtime) *corev1.Secret {
				s := reachable(rt)
				s.Annotations[gardenercluster.AnnotationShootUID] = "uid-now"
				return s
			},
			shootUID: "uid-now",
			want:     fsmtest.Next(StepConfigureOIDC), ready: true,
		},
		{
			name:   "a Secret that cannot be read fails",
			reason: "an unreadable Secret is retried, not waited for",
			secret: reachable,
			faults: []fault{{store: "kcp", verb: "get", kind: "Secret", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
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

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
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

// TestWaitForKubeconfigPollsAsPollsSays waits for a Secret that is not there yet with
// Config.Polls set: the step polls at what Polls answers, and hands it no shoot.
func TestWaitForKubeconfigPollsAsPollsSays(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	rt.Labels[infrav1.LabelRuntimeID] = "rid-rt"
	w := newWorld(t, testGardenerCluster("rid-rt", rt.Name))
	p := &polled{after: 42 * time.Second}
	w.steps.Polls = p.polls

	fsmtest.Check(t, w.steps.waitForKubeconfig(t.Context(), rt), fsmtest.Wait(42*time.Second))
	if len(p.calls) != 1 || p.calls[0].step != StepWaitForKubeconfig || p.calls[0].shoot != nil {
		t.Errorf("Polls calls %+v, want one for %s without a shoot", p.calls, StepWaitForKubeconfig)
	}
}
