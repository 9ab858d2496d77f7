package runtime

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestApplyAuthentication covers the structured authentication ConfigMap of the shoot: written
// labelled with its Runtime, not written again while its data is the same unless forced, and
// the errors of the garden. The Runtime's shoot exists, as on a re-check or an adoption, unless
// the case says the Runtime is being created.
func TestApplyAuthentication(t *testing.T) {
	// authConfig returns the ConfigMap in the garden as the step would write it for rt, with
	// data; when labelled, as the manager wrote it: labelled with the Runtime and marked with
	// the OIDC settings it was written for. Without, as upstream wrote it.
	authConfig := func(t *testing.T, rt *infrav1.Runtime, data string, labelled bool) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{Data: map[string]string{gardener.AuthenticationConfigKey: data}}
		cm.Name, cm.Namespace = gardener.AuthenticationConfigName(rt.Spec.Shoot.Name), testProject
		if labelled {
			cm.Labels = ownerLabels(rt)
			want, err := gardener.AuthenticationConfigMap(rt, renderOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			cm.Annotations = want.Annotations
		}
		return cm
	}
	// rendered is the data the step writes for rt.
	rendered := func(t *testing.T, rt *infrav1.Runtime) string {
		t.Helper()
		cm, err := gardener.AuthenticationConfigMap(rt, renderOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data[gardener.AuthenticationConfigKey]
	}
	noOIDC := func(w *world, rt *infrav1.Runtime) {
		w.steps.Render.DefaultOIDC = nil
		rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = infrav1.OIDCConfig{}
	}
	// The issuers of upstream's AWS example and of the landscape's default.
	const runtimeIssuer, landscapeIssuer = "https://my.cool.tokens.com", "https://operators.accounts.example.com"
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// setup makes the world and the Runtime under test (rt) what the case needs.
		setup func(w *world, rt *infrav1.Runtime)
		// others are in the stores besides rt, given rt.
		others func(t *testing.T, rt *infrav1.Runtime) []client.Object
		faults []fault
		want   fsmtest.Result
		// writes are the garden writes the step makes.
		writes []string
		// exists says the ConfigMap is in the garden afterwards; then it has the rendered data
		// and, when labelled, the Runtime's labels (none when not).
		exists, labelled bool
		// issuer is the issuer URL of the authenticator in the ConfigMap.
		issuer string
		// creating leaves out the shoot: the Runtime is being created. reads is how often the
		// step read the ConfigMap.
		creating bool
		reads    int
		// data is the ConfigMap's config.yaml afterwards when not the rendered configuration.
		data string
	}{
		{
			name:   "without an OIDC provider or a landscape default, moves on without a ConfigMap",
			reason: "a shoot without OIDC needs no authentication configuration",
			setup:  noOIDC,
			want:   fsmtest.Next(StepApplyShoot),
		},
		{
			name:   "the Runtime's OIDC provider gets a ConfigMap labelled with the Runtime",
			reason: "the labels let the deletion tell the Runtime's ConfigMap from another's",
			want:   fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			name:   "the landscape's default stands in for a Runtime without OIDC provider",
			reason: "every shoot gets the landscape's operators' issuer unless its Runtime names one",
			setup: func(_ *world, rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = infrav1.OIDCConfig{}
			},
			want: fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: landscapeIssuer,
		},
		{
			name: "a Runtime being created applies its ConfigMap without reading it first", creating: true,
			reason: "a creation has nothing to compare with, so a read would be wasted",
			want:   fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			name: "a Runtime being created writes over a ConfigMap a lost reply left", creating: true,
			reason: "a retried creation must not fail on its own earlier write",
			others: func(t *testing.T, rt *infrav1.Runtime) []client.Object {
				return []client.Object{authConfig(t, rt, rendered(t, rt), true)}
			},
			want: fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			name: "a re-check with the same data writes nothing", reads: 1,
			reason: "periodic re-checks must not load the garden with writes that change nothing",
			others: func(t *testing.T, rt *infrav1.Runtime) []client.Object {
				return []client.Object{authConfig(t, rt, rendered(t, rt), true)}
			},
			want: fsmtest.Next(StepApplyShoot), exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			// Once, so that a later change of the Runtime's OIDC settings can be told apart.
			name: "an unmarked ConfigMap in this manager's words (an older manager's) is marked once with the OIDC settings it is taken over for", reads: 1,
			reason: "without the mark a later change of the OIDC settings could not be told from the takeover",
			others: func(t *testing.T, rt *infrav1.Runtime) []client.Object {
				return []client.Object{authConfig(t, rt, rendered(t, rt), false)}
			},
			want: fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			// Written by upstream's structuredauth package for the AWS example's provider: its own
			// structs, keys sorted, no username prefix given, the groups prefix defaulted to "".
			name: "upstream's ConfigMap for the Runtime's current OIDC settings is taken over without a write", reads: 1,
			reason: "an adoption must not rewrite what upstream wrote for the same settings",
			others: func(t *testing.T, rt *infrav1.Runtime) []client.Object {
				return []client.Object{authConfig(t, rt, upstreamAWSAuth, false)}
			},
			want: fsmtest.Next(StepApplyShoot), exists: true, issuer: runtimeIssuer, data: upstreamAWSAuth,
		},
		{
			name:   "a forced patch writes the same data again",
			reason: "the force-patch annotation is the operator's way to write past the skip",
			setup:  func(_ *world, rt *infrav1.Runtime) { rt.Annotations = map[string]string{AnnotationForcePatch: "true"} },
			others: func(t *testing.T, rt *infrav1.Runtime) []client.Object {
				return []client.Object{authConfig(t, rt, rendered(t, rt), false)}
			},
			want: fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			name:   "other data is replaced",
			reason: "drift from the Runtime's OIDC settings is corrected",
			others: func(_ *testing.T, rt *infrav1.Runtime) []client.Object {
				return []client.Object{authConfig(t, rt, "an older configuration", true)}
			},
			want: fsmtest.Next(StepApplyShoot), writes: []string{"apply ConfigMap"}, exists: true, labelled: true, issuer: runtimeIssuer,
		},
		{
			name:   "a garden that cannot be read fails with a transient error and writes nothing",
			reason: "a step that cannot see the ConfigMap must not overwrite it blind",
			faults: []fault{{store: "garden", verb: "get", kind: "ConfigMap", err: unavailable(), times: 1}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
		},
		{
			name:   "a failed apply fails",
			reason: "a failed write is retried, not taken for done",
			faults: []fault{{store: "garden", verb: "apply", kind: "ConfigMap", err: unavailable(), times: 1}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			writes: []string{"apply ConfigMap"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			var others []client.Object
			if tt.others != nil {
				others = tt.others(t, rt)
			}
			if !tt.creating {
				others = append(others, testShoot(rt))
			}
			w := newWorld(t, others...)
			if tt.setup != nil {
				tt.setup(w, rt)
			}
			w.fail(tt.faults...)

			out := w.steps.applyAuthentication(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			checkWrites(t, w, "garden", tt.writes...)
			if tt.reads > 0 || tt.creating {
				if got := w.reads("garden", "ConfigMap"); got != tt.reads {
					t.Errorf("read the ConfigMap %d times, want %d", got, tt.reads)
				}
			}
			cm := authConfig(t, rt, "", false)
			if absent := w.absent(w.garden, cm); absent == tt.exists {
				t.Fatalf("ConfigMap %s exists %t, want %t", cm.Name, !absent, tt.exists)
			}
			if !tt.exists {
				return
			}
			data := cm.Data[gardener.AuthenticationConfigKey]
			if tt.data != "" && data != tt.data {
				t.Errorf("ConfigMap data %q, want it unchanged: %q", data, tt.data)
			}
			if tt.data == "" && data != rendered(t, rt) {
				t.Errorf("ConfigMap data %q, want the rendered configuration", data)
			}
			if !strings.Contains(data, "url: "+tt.issuer) {
				t.Errorf("ConfigMap data %q does not name the issuer %s", data, tt.issuer)
			}
			got := cm.Labels[LabelRuntimeName] + "/" + cm.Labels[LabelRuntimeNamespace]
			if want := map[bool]string{true: rt.Name + "/" + rt.Namespace, false: "/"}[tt.labelled]; got != want {
				t.Errorf("ConfigMap labelled for Runtime %q, want %q", got, want)
			}
		})
	}
}

// upstreamAWSAuth is the config.yaml upstream's manager writes for the OIDC provider of
// upstream's AWS example.
const upstreamAWSAuth = `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: groups
      prefix: ""
    username:
      claim: sub
  issuer:
    audiences:
    - xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    url: https://my.cool.tokens.com
kind: AuthenticationConfiguration
`

// TestApplyAuthenticationRemembersAVerdict: once ApplyAuthentication found the ConfigMap as the
// Runtime asks, the verdict stands for the Runtime's and the ConfigMap's versions it was reached
// on, and no others; a ConfigMap edited behind the manager's back is written back.
func TestApplyAuthenticationRemembersAVerdict(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt, testShoot(rt))
	w.steps.verdicts = &verdicts{}
	stored := func() *infrav1.Runtime { return w.stored(rt) }
	// The first pass writes the ConfigMap, the second finds it as asked.
	for pass := range 2 {
		if out := w.steps.applyAuthentication(t.Context(), stored()); !fsmtest.Check(t, out, fsmtest.Next(StepApplyShoot)) {
			t.Fatalf("pass %d", pass)
		}
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = gardener.AuthenticationConfigName(rt.Spec.Shoot.Name), testProject
	w.get(w.garden, cm)
	want := cm.Data[gardener.AuthenticationConfigKey]
	if !w.steps.verdicts.holds(verdictAuthentication, stored(), versionsOf(stored(), []client.Object{cm})) {
		t.Fatal("the pass that found the ConfigMap as asked left no verdict")
	}
	other := stored()
	other.ResourceVersion += "0"
	edited := cm.DeepCopy()
	edited.ResourceVersion += "0"
	for name, stands := range map[string]bool{
		"another Runtime version":   w.steps.verdicts.holds(verdictAuthentication, other, versionsOf(other, []client.Object{cm})),
		"another ConfigMap version": w.steps.verdicts.holds(verdictAuthentication, stored(), versionsOf(stored(), []client.Object{edited})),
		"the shoot's verdict":       w.steps.verdicts.holds(verdictShoot, stored(), versionsOf(stored(), []client.Object{cm})),
	} {
		if stands {
			t.Errorf("the verdict stands for %s", name)
		}
	}
	w.resetCalls()
	if out := w.steps.applyAuthentication(t.Context(), stored()); !fsmtest.Check(t, out, fsmtest.Next(StepApplyShoot)) {
		t.Fatal("pass on the verdict")
	}
	checkWrites(t, w, "garden")

	// Someone rewrites the configuration behind the manager's back.
	cm.Data[gardener.AuthenticationConfigKey] = upstreamAWSAuth
	if err := w.garden.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	w.resetCalls()
	if out := w.steps.applyAuthentication(t.Context(), stored()); !fsmtest.Check(t, out, fsmtest.Next(StepApplyShoot)) {
		t.Fatal("pass after the edit")
	}
	checkWrites(t, w, "garden", "apply ConfigMap")
	w.get(w.garden, cm)
	if got := cm.Data[gardener.AuthenticationConfigKey]; got != want {
		t.Errorf("ConfigMap data after the edit and a pass:\n%s\nwant it written back:\n%s", got, want)
	}
}
