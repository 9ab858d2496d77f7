package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardenclient"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

func TestInitialise(t *testing.T) {
	older := func(name string) *infrav1.Runtime {
		rt := newTestRuntime(t, name)
		rt.Labels[infrav1.LabelRuntimeID] = "rid-rt"
		rt.CreationTimestamp.Time = t0.Add(-time.Hour)
		return rt
	}
	// sameShoot is a Runtime created before rt that names rt's shoot under its own runtime id.
	sameShoot := func(name string) *infrav1.Runtime {
		other := newTestRuntime(t, name)
		other.Spec.Shoot.Name = "rt"
		other.CreationTimestamp.Time = t0.Add(-time.Hour)
		return other
	}
	// shootFor is rt's shoot in the garden, labelled for the Runtime holder.
	shootFor := func(holder string) *gardencorev1beta1.Shoot {
		shoot := &gardencorev1beta1.Shoot{}
		shoot.Name, shoot.Namespace = "rt", testProject
		shoot.Labels = map[string]string{LabelRuntimeName: holder, LabelRuntimeNamespace: testNamespace}
		return shoot
	}
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// change makes the Runtime under test (rt, runtime id rid-rt) what the case needs.
		change func(*infrav1.Runtime)
		// others are in the store besides rt.
		others []client.Object
		faults []fault
		want   fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// finalizers are rt's finalizers in the store afterwards.
		finalizers []string
	}{
		{
			name:   "adds the finalizer and moves on",
			reason: "a new Runtime is protected by the finalizer before anything is created for it",
			want:   fsmtest.Next(StepApplyAuthentication), finalizers: []string{Finalizer},
		},
		{
			name:   "replaces upstream's finalizer in the same write",
			reason: "an adopted Runtime must not keep upstream's finalizer, which no one would remove",
			change: func(rt *infrav1.Runtime) { rt.Finalizers = []string{UpstreamFinalizer} },
			want:   fsmtest.Next(StepApplyAuthentication), finalizers: []string{Finalizer},
		},
		{
			name:   "a missing label is the user's to fix",
			reason: "a retry cannot add a label; the message names the label the operator must set",
			change: func(rt *infrav1.Runtime) { delete(rt.Labels, infrav1.LabelGlobalAccountID) },
			want:   fsmtest.Terminal("MissingLabel"),
			says:   "label " + infrav1.LabelGlobalAccountID + " is missing",
		},
		{
			name:   "a key set that is not a JWK set is the user's to fix, before the finalizer",
			reason: "an invalid spec fails before the Runtime is held; the message names the field to fix",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.JWKS = []byte(`{"keys":[{"kty":"RSA","n":"AQAB"}]}`)
			},
			want: fsmtest.Terminal(ReasonInvalidJWKS),
			says: "spec.shoot.kubernetes.kubeAPIServer.oidcConfig.jwks",
		},
		{
			name:   "a runtime id an older Runtime claims is taken, before the finalizer",
			reason: "two Runtimes must not share a runtime id; the message names the Runtime that holds it",
			others: []client.Object{older("first")},
			want:   fsmtest.Terminal(ReasonRuntimeIDTaken),
			says:   "runtime id rid-rt (label " + infrav1.LabelRuntimeID + ") belongs to Runtime first",
		},
		{
			name:   "a runtime id an older Runtime named after it claims is taken",
			reason: "a Runtime named after its runtime id is found by its name, not through the index",
			others: []client.Object{older("rid-rt")},
			want:   fsmtest.Terminal(ReasonRuntimeIDTaken),
			says:   "belongs to Runtime rid-rt",
		},
		{
			name:   "a Runtime named after its runtime id finds an older Runtime that carries it",
			reason: "the index holds the Runtimes named otherwise, so the older claimant is found",
			change: func(rt *infrav1.Runtime) { rt.Labels[infrav1.LabelRuntimeID] = rt.Name },
			others: []client.Object{func() client.Object {
				o := older("first")
				o.Labels[infrav1.LabelRuntimeID] = "rt"
				return o
			}()},
			want: fsmtest.Terminal(ReasonRuntimeIDTaken),
			says: "runtime id rt (label " + infrav1.LabelRuntimeID + ") belongs to Runtime first",
		},
		{
			name:   "a Runtime named after another's runtime id does not claim it",
			reason: "only the runtime-id label claims an id; a Runtime's name is not a claim",
			others: []client.Object{func() client.Object {
				o := older("rid-rt")
				o.Labels[infrav1.LabelRuntimeID] = "rid-other"
				return o
			}()},
			want: fsmtest.Next(StepApplyAuthentication), finalizers: []string{Finalizer},
		},
		{
			name:   "the Runtime that holds the id's GardenerCluster keeps it against an older one",
			reason: "holding the GardenerCluster outranks age, so a running Runtime is never displaced",
			others: []client.Object{older("first"), testGardenerCluster("rid-rt", "rt")},
			want:   fsmtest.Next(StepApplyAuthentication), finalizers: []string{Finalizer},
		},
		{
			name:   "a shoot an older Runtime names is taken, before the finalizer",
			reason: "two Runtimes must not share a shoot; the message names the Runtime that named it first",
			others: []client.Object{sameShoot("first")},
			want:   fsmtest.Terminal(ReasonShootNameTaken),
			says:   "shoot rt (spec.shoot.name) belongs to Runtime " + testNamespace + "/first, which named it first",
		},
		{
			name:   "the Runtime its shoot is labelled for keeps it against an older one",
			reason: "the shoot's owner labels outrank age, so a running Runtime is never displaced",
			others: []client.Object{sameShoot("first"), shootFor("rt")},
			want:   fsmtest.Next(StepApplyAuthentication), finalizers: []string{Finalizer},
		},
		{
			name:   "a shoot labelled for a Runtime that is gone is not taken over",
			reason: "only a human may hand over a shoot whose Runtime is gone; the message names that Runtime",
			others: []client.Object{shootFor("gone")},
			want:   fsmtest.Terminal(ReasonShootNameTaken),
			says:   "shoot rt (spec.shoot.name) belongs to Runtime " + testNamespace + "/gone",
		},
		{
			name:   "a conflicting finalizer write is retried",
			reason: "a conflict on the finalizer's write is re-read and retried, not failed",
			faults: []fault{{store: "kcp", verb: "patch", kind: "Runtime", err: apierrors.NewConflict(schema.GroupResource{Resource: "runtimes"}, "rt", errors.New("changed"))}},
			want:   fsmtest.Plain(retry.ClassConflict, retry.ReasonConflict),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			if tt.change != nil {
				tt.change(rt)
			}
			w := newWorld(t, append([]client.Object{rt}, tt.others...)...)
			w.fail(tt.faults...)
			w.get(w.kcp, rt)

			out := w.steps.initialise(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			stored := &infrav1.Runtime{}
			stored.Name, stored.Namespace = rt.Name, rt.Namespace
			w.get(w.kcp, stored)
			if !slices.Equal(stored.Finalizers, tt.finalizers) {
				t.Errorf("finalizers %v, want %v", stored.Finalizers, tt.finalizers)
			}
		})
	}
}

// TestFinalizerWritesKeepWhatTheCacheDrops checks that adding and removing the finalizer writes
// the finalizers alone. The steps get a Runtime as the manager's cache keeps it, without
// kubectl's copy of the last apply (gardenclient.CompactMeta); a write of the whole object
// would take that copy from the stored Runtime, and a later kubectl apply could no longer tell
// which fields it set.
func TestFinalizerWritesKeepWhatTheCacheDrops(t *testing.T) {
	const lastApplied = corev1.LastAppliedConfigAnnotation
	rt := newTestRuntime(t, "rt")
	rt.Annotations = map[string]string{lastApplied: `{"kind":"Runtime"}`}
	w := newWorld(t, rt)
	cached := func() *infrav1.Runtime {
		got := w.stored(rt)
		gardenclient.CompactMeta(got)
		if _, ok := got.Annotations[lastApplied]; ok {
			t.Fatal("the cache's transform kept the last-applied annotation: the test would not see a write of the whole Runtime")
		}
		return got
	}
	for _, step := range []struct {
		name string
		run  func(context.Context, *infrav1.Runtime) fsm.Outcome
		want []string
	}{
		{"Initialise", w.steps.initialise, []string{Finalizer}},
		{"RemoveFinalizer", w.steps.removeFinalizer, nil},
	} {
		if got := fsmtest.ResultOf(step.run(t.Context(), cached())); got.Kind == fsm.KindFail {
			t.Fatalf("%s failed: %+v", step.name, got)
		}
		stored := w.stored(rt)
		if !slices.Equal(stored.Finalizers, step.want) {
			t.Errorf("after %s: finalizers %v, want %v", step.name, stored.Finalizers, step.want)
		}
		if stored.Annotations[lastApplied] == "" {
			t.Errorf("after %s: the stored Runtime lost its %s annotation", step.name, lastApplied)
		}
	}
}
