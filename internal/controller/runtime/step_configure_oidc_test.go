package runtime

import (
	"maps"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// openIDConnect returns an OpenIDConnect of the runtime cluster with labels and issuer.
func openIDConnect(name string, labels map[string]string, issuer string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"issuerURL": issuer, "clientID": name}}}
	o.SetGroupVersionKind(gardener.OpenIDConnectGVK)
	o.SetName(name)
	o.SetLabels(labels)
	return o
}

// openIDConnectIssuers maps the OpenIDConnects of the runtime cluster to their issuers, and
// the managed ones (LabelManagedBy) to true in managed.
func openIDConnectIssuers(t *testing.T, w *world) (issuers map[string]string, managed map[string]bool) {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gardener.OpenIDConnectGVK.GroupVersion().WithKind(gardener.OpenIDConnectGVK.Kind + "List"))
	if err := w.runtime.List(t.Context(), list); err != nil {
		t.Fatalf("list OpenIDConnects: %v", err)
	}
	issuers, managed = map[string]string{}, map[string]bool{}
	for _, o := range list.Items {
		issuers[o.GetName()], _, _ = unstructured.NestedString(o.Object, "spec", "issuerURL")
		managed[o.GetName()] = o.GetLabels()[LabelManagedBy] == FieldOwner
	}
	return issuers, managed
}

// TestConfigureOIDC covers the additional OIDC providers of the runtime cluster: one managed
// OpenIDConnect per provider the spec lists or the landscape's shared tenant, the managed ones
// (upstream's too) removed once unlisted, anyone else's left alone, and a cluster that does not
// serve the API yet.
func TestConfigureOIDC(t *testing.T) {
	const (
		// The additional provider of upstream's AWS example and the landscape's shared tenant.
		runtimeIssuer = "https://some.others.tokens.com"
		sharedIssuer  = "https://kyma.accounts.example.com"
	)
	managedBy := map[string]string{LabelManagedBy: FieldOwner}
	upstream := map[string]string{LabelUpstreamManagedBy: upstreamManager}
	noProviders := func(w *world, rt *infrav1.Runtime) {
		rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{}
		w.steps.Render.DefaultAdditionalOIDC = nil
	}
	noKindMatchOnList := []fault{{store: "runtime", verb: "list", kind: gardener.OpenIDConnectGVK.Kind, err: noKindMatch(gardener.OpenIDConnectGVK)}}
	// A runtime client maps the kind without discovery, so a cluster without the API answers
	// the list with 404.
	notServedOnList := []fault{{store: "runtime", verb: "list", kind: gardener.OpenIDConnectGVK.Kind,
		err: apierrors.NewNotFound(schema.GroupResource{Group: gardener.OpenIDConnectGVK.Group, Resource: "openidconnects"}, "")}}
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// setup makes the world and the Runtime under test (rt) what the case needs.
		setup func(w *world, rt *infrav1.Runtime)
		// existing are the OpenIDConnects in the runtime cluster before the step.
		existing []*unstructured.Unstructured
		// again runs the step once before the run under test, which then writes nothing.
		again bool
		// noSecret leaves rt's kubeconfig Secret out.
		noSecret bool
		faults   []fault
		want     fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// issuers are the runtime cluster's OpenIDConnects afterwards, by name; managed are the
		// ones labelled as the controller's.
		issuers map[string]string
		managed []string
	}{
		{
			name:    "applies the Runtime's additional provider as a managed OpenIDConnect",
			reason:  "the label marks what this manager may later remove",
			want:    fsmtest.Next(StepConfigureCluster),
			issuers: map[string]string{gardener.OpenIDConnectName(0): runtimeIssuer}, managed: []string{gardener.OpenIDConnectName(0)},
		},
		{
			name:    "a second run writes nothing",
			reason:  "periodic re-checks must not write to the runtime cluster",
			again:   true,
			want:    fsmtest.Next(StepConfigureCluster),
			issuers: map[string]string{gardener.OpenIDConnectName(0): runtimeIssuer}, managed: []string{gardener.OpenIDConnectName(0)},
		},
		{
			name:    "a Runtime that leaves its additional providers unset gets the landscape's shared tenant",
			reason:  "unset means the landscape's default, as upstream reads it",
			setup:   func(_ *world, rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = nil },
			want:    fsmtest.Next(StepConfigureCluster),
			issuers: map[string]string{gardener.OpenIDConnectName(0): sharedIssuer}, managed: []string{gardener.OpenIDConnectName(0)},
		},
		{
			name:   "unlisted managed OpenIDConnects go, upstream's too, and someone else's stays",
			reason: "a removed provider must stop granting access, and others' objects are not ours",
			existing: []*unstructured.Unstructured{
				openIDConnect(gardener.OpenIDConnectName(0), managedBy, "https://before.example.com"),
				openIDConnect(gardener.OpenIDConnectName(1), managedBy, "https://dropped.example.com"),
				openIDConnect("upstream-oidc", upstream, "https://upstream.example.com"),
				openIDConnect("made-by-someone-else", nil, "https://foreign.example.com"),
			},
			want: fsmtest.Next(StepConfigureCluster),
			issuers: map[string]string{
				gardener.OpenIDConnectName(0): runtimeIssuer,
				"made-by-someone-else":        "https://foreign.example.com",
			},
			managed: []string{gardener.OpenIDConnectName(0)},
		},
		{
			name:     "upstream's OpenIDConnect of a listed provider is taken over",
			reason:   "an adoption must not leave two objects for one provider",
			existing: []*unstructured.Unstructured{openIDConnect(gardener.OpenIDConnectName(0), upstream, "https://upstream.example.com")},
			want:     fsmtest.Next(StepConfigureCluster),
			issuers:  map[string]string{gardener.OpenIDConnectName(0): runtimeIssuer}, managed: []string{gardener.OpenIDConnectName(0)},
		},
		{
			name:   "an empty list is no providers, not the shared tenant: the managed ones go",
			reason: "an empty list is how a Runtime opts out of the shared tenant",
			setup: func(_ *world, rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig = &[]infrav1.OIDCConfig{}
			},
			existing: []*unstructured.Unstructured{openIDConnect(gardener.OpenIDConnectName(0), managedBy, sharedIssuer)},
			want:     fsmtest.Next(StepConfigureCluster),
			issuers:  map[string]string{},
		},
		{
			name:    "a cluster without the extension's API moves on when no provider is wanted",
			reason:  "a cluster without the extension has nothing to clean up",
			setup:   noProviders,
			faults:  noKindMatchOnList,
			want:    fsmtest.Next(StepConfigureCluster),
			issuers: map[string]string{},
		},
		{
			name:   "a cluster without the extension's API is waited for while a provider is wanted",
			reason: "the extension comes up after the cluster; the message names the extension the operator may check",
			faults: noKindMatchOnList,
			want:   fsmtest.Transient(ReasonOIDCServiceUnavailable),
			says: "the runtime cluster does not serve " + gardener.OpenIDConnectGVK.GroupKind().String() +
				", which the " + gardener.ExtensionOIDCService + " extension provides",
			issuers: map[string]string{},
		},
		{
			name:   "a cluster that answers 404 for the extension's API is waited for too",
			reason: "a client without discovery sees the missing API as 404; the message names the extension all the same",
			faults: notServedOnList,
			want:   fsmtest.Transient(ReasonOIDCServiceUnavailable),
			says: "the runtime cluster does not serve " + gardener.OpenIDConnectGVK.GroupKind().String() +
				", which the " + gardener.ExtensionOIDCService + " extension provides",
			issuers: map[string]string{},
		},
		{
			name:    "a cluster that answers 404 for it moves on when no provider is wanted",
			reason:  "a 404 is the same missing API as a kind that does not match",
			setup:   noProviders,
			faults:  notServedOnList,
			want:    fsmtest.Next(StepConfigureCluster),
			issuers: map[string]string{},
		},
		{
			name:     "a runtime without kubeconfig Secret fails",
			reason:   "a missing Secret may still be on its way, so the failure is retried",
			noSecret: true,
			want:     fsmtest.Plain(retry.ClassTransient, retry.ReasonNotFound),
			issuers:  map[string]string{},
		},
		{
			name:    "a failed apply fails",
			reason:  "a provider that is not applied is not configured",
			faults:  []fault{{store: "runtime", verb: "apply", kind: gardener.OpenIDConnectGVK.Kind, err: unavailable()}},
			want:    fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			issuers: map[string]string{},
		},
		{
			name:     "a failed delete fails",
			reason:   "a dropped provider that still grants access is not configured",
			existing: []*unstructured.Unstructured{openIDConnect(gardener.OpenIDConnectName(1), managedBy, "https://dropped.example.com")},
			faults:   []fault{{store: "runtime", verb: "delete", kind: gardener.OpenIDConnectGVK.Kind, err: unavailable()}},
			want:     fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			issuers: map[string]string{
				gardener.OpenIDConnectName(0): runtimeIssuer,
				gardener.OpenIDConnectName(1): "https://dropped.example.com",
			},
			managed: []string{gardener.OpenIDConnectName(0), gardener.OpenIDConnectName(1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			var objs []client.Object
			if !tt.noSecret {
				objs = append(objs, reachable(rt))
			}
			w := newWorld(t, objs...)
			for _, o := range tt.existing {
				w.create(w.runtime, o)
			}
			if tt.setup != nil {
				tt.setup(w, rt)
			}
			if tt.again {
				if out := w.steps.configureOIDC(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Next(StepConfigureCluster)) {
					t.Fatal("first run")
				}
				w.resetCalls()
			}
			w.fail(tt.faults...)

			out := w.steps.configureOIDC(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			if tt.again {
				checkWrites(t, w, "runtime")
			}
			if got, want := conditionTrue(rt, infrav1.ConditionOidcConfigured), out.Err() == nil; got != want {
				t.Errorf("%s true %t, want %t", infrav1.ConditionOidcConfigured, got, want)
			}
			w.heal()
			issuers, managed := openIDConnectIssuers(t, w)
			if !maps.Equal(issuers, tt.issuers) {
				t.Errorf("OpenIDConnects %v, want %v", issuers, tt.issuers)
			}
			for name, m := range managed {
				if want := slices.Contains(tt.managed, name); m != want {
					t.Errorf("OpenIDConnect %s managed %t, want %t", name, m, want)
				}
			}
		})
	}
}
