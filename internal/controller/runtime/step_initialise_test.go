package runtime

import (
	"errors"
	"slices"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
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
		// change makes the Runtime under test (rt, runtime id rid-rt) what the case needs.
		change func(*infrav1.Runtime)
		// others are in the store besides rt.
		others []client.Object
		faults []fault
		want   string
		// class and reason are the classification of a failure.
		class  retry.Class
		reason string
		// finalizers are rt's finalizers in the store afterwards.
		finalizers []string
	}{
		{
			name: "adds the finalizer and moves on",
			want: "Next(ApplyAuthentication)", finalizers: []string{Finalizer},
		},
		{
			name:   "replaces upstream's finalizer in the same update",
			change: func(rt *infrav1.Runtime) { rt.Finalizers = []string{UpstreamFinalizer} },
			want:   "Next(ApplyAuthentication)", finalizers: []string{Finalizer},
		},
		{
			name:   "a missing label is the user's to fix",
			change: func(rt *infrav1.Runtime) { delete(rt.Labels, infrav1.LabelGlobalAccountID) },
			want:   "Fail(MissingLabel: label " + infrav1.LabelGlobalAccountID + " is missing)", class: retry.ClassTerminal, reason: "MissingLabel",
		},
		{
			name: "a key set that is not a JWK set is the user's to fix, before the finalizer",
			change: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig.JWKS = []byte(`{"keys":[{"kty":"RSA","n":"AQAB"}]}`)
			},
			want: "Fail(InvalidJWKS: spec.shoot.kubernetes.kubeAPIServer.oidcConfig.jwks", class: retry.ClassTerminal, reason: ReasonInvalidJWKS,
		},
		{
			name:   "a runtime id an older Runtime claims is taken, before the finalizer",
			others: []client.Object{older("first")},
			want:   "Fail(RuntimeIDTaken: runtime id rid-rt (label " + infrav1.LabelRuntimeID + ") belongs to Runtime first", class: retry.ClassTerminal, reason: ReasonRuntimeIDTaken,
		},
		{
			name:   "the Runtime that holds the id's GardenerCluster keeps it against an older one",
			others: []client.Object{older("first"), testGardenerCluster("rid-rt", "rt")},
			want:   "Next(ApplyAuthentication)", finalizers: []string{Finalizer},
		},
		{
			name:   "a shoot an older Runtime names is taken, before the finalizer",
			others: []client.Object{sameShoot("first")},
			want:   "Fail(ShootNameTaken: shoot rt (spec.shoot.name) belongs to Runtime " + testNamespace + "/first, which named it first", class: retry.ClassTerminal, reason: ReasonShootNameTaken,
		},
		{
			name:   "the Runtime its shoot is labelled for keeps it against an older one",
			others: []client.Object{sameShoot("first"), shootFor("rt")},
			want:   "Next(ApplyAuthentication)", finalizers: []string{Finalizer},
		},
		{
			name:   "a shoot labelled for a Runtime that is gone is not taken over",
			others: []client.Object{shootFor("gone")},
			want:   "Fail(ShootNameTaken: shoot rt (spec.shoot.name) belongs to Runtime " + testNamespace + "/gone", class: retry.ClassTerminal, reason: ReasonShootNameTaken,
		},
		{
			name:   "a conflicting update is retried",
			faults: []fault{{store: "kcp", verb: "update", kind: "Runtime", err: apierrors.NewConflict(schema.GroupResource{Resource: "runtimes"}, "rt", errors.New("changed"))}},
			want:   "Fail(add finalizer: Operation cannot be fulfilled", class: retry.ClassConflict, reason: retry.ReasonConflict,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTestRuntime(t, "rt")
			if tt.change != nil {
				tt.change(rt)
			}
			w := newWorld(t, append([]client.Object{rt}, tt.others...)...)
			w.fail(tt.faults...)
			w.get(w.kcp, rt)

			out := w.steps.initialise(t.Context(), rt)

			checkOutcome(t, out, tt.want, tt.class, tt.reason)
			stored := &infrav1.Runtime{}
			stored.Name, stored.Namespace = rt.Name, rt.Namespace
			w.get(w.kcp, stored)
			if !slices.Equal(stored.Finalizers, tt.finalizers) {
				t.Errorf("finalizers %v, want %v", stored.Finalizers, tt.finalizers)
			}
		})
	}
}
