package runtime

import (
	"maps"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestEnsureGardenerCluster covers the GardenerCluster of the runtime id: created with upstream's
// labels, the shoot's domain and the Secret reference, left alone once it is so, never taken
// from another Runtime that holds it, and taken over from upstream or from a Runtime that is gone.
func TestEnsureGardenerCluster(t *testing.T) {
	const domain = "rt.kyma.example.com"
	shoot := func(rt *infrav1.Runtime) *gardencorev1beta1.Shoot {
		s := testShoot(rt)
		s.Spec.DNS = &gardencorev1beta1.DNS{Domain: ptr.To(domain)}
		return s
	}
	olderRuntime := func(name string) *infrav1.Runtime {
		rt := newTestRuntime(t, name)
		rt.Labels[infrav1.LabelRuntimeID] = "rid-rt"
		rt.CreationTimestamp.Time = t0.Add(-time.Hour)
		return rt
	}
	upstreams := testGardenerCluster("rid-rt", "rt")
	delete(upstreams.Labels, LabelRuntimeName)
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// others are in the stores besides rt (runtime id rid-rt), given rt.
		others func(rt *infrav1.Runtime) []client.Object
		// again runs the step once before the run under test.
		again  bool
		faults []fault
		want   fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// writes are the kcp writes of the run under test.
		writes []string
		// holder is the Runtime the GardenerCluster names afterwards: its shoot, its label; the
		// GardenerCluster is rt's as the step writes it when holder is rt, and absent when "".
		holder string
		// domain is the GardenerCluster's SKR domain annotation.
		domain string
	}{
		{
			name:   "creates the GardenerCluster of the runtime id for the Runtime and its shoot",
			reason: "the GardenerCluster is what makes the kubeconfig Secret appear",
			others: func(rt *infrav1.Runtime) []client.Object { return []client.Object{shoot(rt)} },
			want:   fsmtest.Next(StepWaitForKubeconfig), writes: []string{"create GardenerCluster"}, holder: "rt", domain: domain,
		},
		{
			name:   "a shoot not visible yet leaves the domain out",
			reason: "a shoot the cache has not seen yet must not block the GardenerCluster",
			want:   fsmtest.Next(StepWaitForKubeconfig), writes: []string{"create GardenerCluster"}, holder: "rt",
		},
		{
			name:   "a second run changes nothing",
			reason: "periodic re-checks must not write",
			others: func(rt *infrav1.Runtime) []client.Object { return []client.Object{shoot(rt)} },
			again:  true,
			want:   fsmtest.Next(StepWaitForKubeconfig), holder: "rt", domain: domain,
		},
		{
			name:   "the GardenerCluster another Runtime of the runtime id holds is its, and left unchanged",
			reason: "a Runtime must never take another's GardenerCluster; the message names the Runtime that holds it",
			others: func(rt *infrav1.Runtime) []client.Object {
				return []client.Object{shoot(rt), olderRuntime("first"), testGardenerCluster("rid-rt", "first")}
			},
			want: fsmtest.Terminal(ReasonRuntimeIDTaken), holder: "first",
			says: "runtime id rid-rt (label " + infrav1.LabelRuntimeID + ") belongs to Runtime first",
		},
		{
			name:   "upstream's GardenerCluster of the Runtime's shoot is taken over",
			reason: "an adoption takes over upstream's GardenerCluster rather than fail on it",
			others: func(rt *infrav1.Runtime) []client.Object {
				return []client.Object{shoot(rt), upstreams.DeepCopy()}
			},
			want: fsmtest.Next(StepWaitForKubeconfig), writes: []string{"update GardenerCluster"}, holder: "rt", domain: domain,
		},
		{
			name:   "the GardenerCluster of a Runtime that is gone is taken over",
			reason: "a GardenerCluster left by a deleted Runtime must not block the id forever",
			others: func(rt *infrav1.Runtime) []client.Object {
				return []client.Object{shoot(rt), testGardenerCluster("rid-rt", "gone")}
			},
			want: fsmtest.Next(StepWaitForKubeconfig), writes: []string{"update GardenerCluster"}, holder: "rt", domain: domain,
		},
		{
			name:   "a shoot that cannot be read fails before any write",
			reason: "the domain comes from the shoot, so a failed read must not write a GardenerCluster without it",
			faults: []fault{{store: "garden", verb: "get", kind: "Shoot", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
		},
		{
			name:   "a failed create fails",
			reason: "a failed write is retried, not taken for done",
			faults: []fault{{store: "kcp", verb: "create", kind: "GardenerCluster", err: unavailable()}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"create GardenerCluster"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			rt.Labels[infrav1.LabelRuntimeID] = "rid-rt"
			objs := []client.Object{rt}
			if tt.others != nil {
				objs = append(objs, tt.others(rt)...)
			}
			w := newWorld(t, objs...)
			w.get(w.kcp, rt)
			if tt.again {
				if out := w.steps.ensureGardenerCluster(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForKubeconfig)) {
					t.Fatal("first run")
				}
			}
			var before *infrav1.GardenerCluster
			if gc := testGardenerCluster("rid-rt", ""); !w.absent(w.kcp, gc) {
				before = gc
			}
			w.fail(tt.faults...)
			w.resetCalls()

			out := w.steps.ensureGardenerCluster(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			checkWrites(t, w, "kcp", tt.writes...)
			gc := testGardenerCluster("rid-rt", "")
			if absent := w.absent(w.kcp, gc); absent != (tt.holder == "") {
				t.Fatalf("GardenerCluster absent %t, want %t", absent, tt.holder == "")
			}
			switch tt.holder {
			case "":
			case rt.Name:
				checkGardenerCluster(t, gc, rt, tt.domain)
			default:
				if gc.Labels[LabelRuntimeName] != tt.holder || gc.Spec.Shoot.Name != tt.holder {
					t.Errorf("GardenerCluster labelled for %q with shoot %q, want both %q", gc.Labels[LabelRuntimeName], gc.Spec.Shoot.Name, tt.holder)
				}
				if before == nil || gc.ResourceVersion != before.ResourceVersion {
					t.Errorf("GardenerCluster of Runtime %s changed", tt.holder)
				}
			}
		})
	}
}

// checkGardenerCluster fails the test unless gc is rt's GardenerCluster as EnsureGardenerCluster
// writes it, with the SKR domain annotation domain ("" for none).
func checkGardenerCluster(t *testing.T, gc *infrav1.GardenerCluster, rt *infrav1.Runtime, domain string) {
	t.Helper()
	want := map[string]string{
		infrav1.LabelRegion:         rt.Spec.Shoot.Region,
		infrav1.LabelPlatformRegion: rt.Spec.Shoot.PlatformRegion,
		infrav1.LabelShootName:      rt.Spec.Shoot.Name,
		infrav1.LabelKymaManagedBy:  gardenercluster.ManagedBy,
		infrav1.LabelKymaInternal:   "true",
		LabelRuntimeName:            rt.Name,
	}
	for _, l := range gardenerClusterLabels {
		if rt.Labels[l] == "" {
			t.Fatalf("the test Runtime lacks label %s", l)
		}
		want[l] = rt.Labels[l]
	}
	if !maps.Equal(gc.Labels, want) {
		t.Errorf("GardenerCluster labels %v, want %v", gc.Labels, want)
	}
	if got := gc.Annotations[infrav1.AnnotationSKRDomain]; got != domain {
		t.Errorf("SKR domain %q, want %q", got, domain)
	}
	if gc.Spec.Shoot.Name != rt.Spec.Shoot.Name {
		t.Errorf("shoot %q, want %q", gc.Spec.Shoot.Name, rt.Spec.Shoot.Name)
	}
	wantRef := infrav1.SecretKeyRef{Name: "kubeconfig-rid-rt", Namespace: rt.Namespace, Key: KubeconfigKey}
	if gc.Spec.Kubeconfig.Secret != wantRef {
		t.Errorf("kubeconfig Secret %+v, want %+v", gc.Spec.Kubeconfig.Secret, wantRef)
	}
}
