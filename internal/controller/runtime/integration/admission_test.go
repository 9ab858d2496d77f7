package integration_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestAdmissionRefusalsAreClassified writes wrong shoots to the simulator through the Gardener
// API the manager uses, the way the ApplyShoot step writes them, and checks that each admission
// rule refuses with Gardener's message and that the engine classifies the refusal: a shoot
// Gardener will never accept is a terminal user error; Gardener's internal error for a missing
// cloud profile is retried.
func TestAdmissionRefusalsAreClassified(t *testing.T) {
	c, err := client.New(sim.RESTConfig(), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// A shoot that exists, for the update rules.
	existing := renderRuntime(t, "adm-existing")
	applyAuth(t, c, existing)
	if err := applyShoot(t, c, existing.Shoot); err != nil {
		t.Fatalf("a rendered shoot is refused: %v", err)
	}

	tests := []struct {
		// name describes what is wrong.
		name string
		// shoot is the shoot name; existing updates the existing shoot.
		shoot string
		// runtime makes the Runtime wrong before it is rendered, for what the manager renders
		// differently by the Runtime (the runtime config by Kubernetes version).
		runtime func(*infrav1.Runtime)
		// mutate makes the rendered shoot wrong.
		mutate func(*gardencorev1beta1.Shoot)
		// skipAuth leaves the structured-auth ConfigMap out.
		skipAuth bool
		// badAuth writes this config.yaml instead of the rendered one.
		badAuth string
		// code is Gardener's HTTP status code.
		code int32
		// says is a fragment of Gardener's message.
		says string
		// class is how the engine classifies the refusal.
		class retry.Class
	}{
		{
			name: "missing infrastructureConfig", shoot: "adm-noinfra",
			mutate: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.InfrastructureConfig = nil },
			code:   422, says: "InfrastructureConfig must be set for AWS shoots", class: retry.ClassTerminal,
		},
		{
			name: "zone outside the node network", shoot: "adm-zones",
			mutate: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Provider.InfrastructureConfig.Raw = []byte(strings.Replace(string(s.Spec.Provider.InfrastructureConfig.Raw), `"workers":"10.250.0.0/19"`, `"workers":"10.180.0.0/19"`, 1))
			},
			code: 422, says: `must be a subset of "networking.nodes"`, class: retry.ClassTerminal,
		},
		{
			name: "oidcConfig from Kubernetes 1.32 on", shoot: "adm-oidc",
			mutate: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Kubernetes.KubeAPIServer.OIDCConfig = &gardencorev1beta1.OIDCConfig{ //nolint:staticcheck // SA1019: the field under test.
					IssuerURL: ptr.To("https://issuer.example.com"), ClientID: ptr.To("kyma"),
				}
			},
			code: 422, says: "for Kubernetes versions >= 1.32, oidcConfig field is no longer supported", class: retry.ClassTerminal,
		},
		{
			name: "Kubernetes downgrade", shoot: "adm-existing",
			mutate: func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.32.8" },
			code:   422, says: "kubernetes version downgrade is not supported", class: retry.ClassTerminal,
		},
		{
			name: "region the cloud profile lacks", shoot: "adm-region",
			mutate: func(s *gardencorev1beta1.Shoot) { s.Spec.Region = "mars-north-1" },
			code:   403, says: "mars-north-1", class: retry.ClassTerminal,
		},
		{
			name: "machine type the cloud profile lacks", shoot: "adm-machine",
			mutate: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Machine.Type = "m1.tiny" },
			code:   403, says: "m1.tiny", class: retry.ClassTerminal,
		},
		{
			name: "Kubernetes version the cloud profile no longer offers", shoot: "adm-version",
			runtime: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = ptr.To("1.28.7") },
			code:    403, says: "1.28.7", class: retry.ClassTerminal,
		},
		{
			name: "unknown cloud profile", shoot: "adm-profile",
			mutate: func(s *gardencorev1beta1.Shoot) { s.Spec.CloudProfile.Name = "nowhere" },
			code:   500, says: "could not find referenced cloud profile", class: retry.ClassTransient,
		},
		{
			name: "structured authentication ConfigMap missing", shoot: "adm-nocm", skipAuth: true,
			code: 403, says: "failed to resolve structured authentication config map reference", class: retry.ClassTerminal,
		},
		{
			name: "structured authentication Kubernetes refuses", shoot: "adm-badcm",
			badAuth: "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://insecure.example.com\n    audiences: [kyma]\n  claimMappings:\n    username:\n      claim: sub\n",
			code:    422, says: "provided invalid authentication configuration", class: retry.ClassTerminal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := existing
			if tt.shoot != existing.Shoot.Name {
				r = renderRuntimeWith(t, tt.shoot, tt.runtime)
			}
			shoot := r.Shoot.DeepCopy()
			if tt.mutate != nil {
				tt.mutate(shoot)
			}
			switch {
			case tt.badAuth != "":
				r.AuthenticationConfig.Data[gardener.AuthenticationConfigKey] = tt.badAuth
				applyAuth(t, c, r)
			case !tt.skipAuth:
				applyAuth(t, c, r)
			}
			err := applyShoot(t, c, shoot)
			if err == nil {
				t.Fatal("the simulator admitted the wrong shoot")
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != tt.code {
				t.Errorf("refusal = %v, want HTTP %d", err, tt.code)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("refusal %q does not say %q", err, tt.says)
			}
			if got := retry.Classify(runtimectrl.ShootWriteError(shoot.Name, err)); got.Class != tt.class {
				t.Errorf("classified as %s/%s, want %s", got.Class, got.Reason, tt.class)
			}
		})
	}
}

// TestSeedNotFoundFailsFast enforces the seed location of a runtime in a region where no seed
// is ready: the runtime fails at once as a user error, before any shoot is created, instead of
// waiting out the creation deadline for a shoot Gardener cannot schedule.
func TestSeedNotFoundFailsFast(t *testing.T) {
	const region = "eu-west-1"
	if err := sim.SetRegionReady(t.Context(), region, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.SetRegionReady(t.Context(), region, true) })
	rt := newRuntimeWith(t, "seedless-1", func(rt *infrav1.Runtime) {
		rt.Spec.Shoot.Region = region
		rt.Spec.Shoot.EnforceSeedLocation = ptr.To(true)
		rt.Spec.Shoot.Provider.Workers[0].Zones = []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}
	})
	rt = waitForRuntime(t, rt, time.Minute, "Failed", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateFailed
	})
	if got := readyReason(rt); got != infrav1.ReasonUserActionRequired {
		t.Errorf("Ready reason: got %s, want %s", got, infrav1.ReasonUserActionRequired)
	}
	if r := rt.Status.Retry; r == nil || r.Reason != runtimectrl.ReasonSeedNotFound || r.Attempt != 0 {
		t.Errorf("retry record: got %+v, want reason %s and no attempts", r, runtimectrl.ReasonSeedNotFound)
	}
	err := garden.Get(t.Context(), client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}, &gardencorev1beta1.Shoot{})
	if err == nil {
		t.Error("a shoot was created although no seed can host it")
	}

	// The region recovers; a manual retry provisions the runtime.
	if err := sim.SetRegionReady(t.Context(), region, true); err != nil {
		t.Fatal(err)
	}
	if rt.Annotations == nil {
		rt.Annotations = map[string]string{}
	}
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = "2026-01-01T00:00:00Z" // the seed is back
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, rt, 2*time.Minute, "Ready after the seed is back", func(rt *infrav1.Runtime) bool {
		return rt.Status.State == infrav1.StateReady
	})
}

// renderRuntime renders the upstream aws example as runtime name, with the landscape defaults
// of these tests, and removes what the test writes from it afterwards.
func renderRuntime(t *testing.T, name string) gardener.Rendered {
	t.Helper()
	return renderRuntimeWith(t, name, nil)
}

// renderRuntimeWith is renderRuntime with the Runtime changed by change (when not nil) before
// it is rendered.
func renderRuntimeWith(t *testing.T, name string, change func(*infrav1.Runtime)) gardener.Rendered {
	t.Helper()
	rt := awsRuntime(t, name)
	if change != nil {
		change(rt)
	}
	opts := renderOptions(t, nil)
	r, err := runtimectrl.Render(rt, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = garden.Delete(t.Context(), r.AuthenticationConfig)
		shoot := &gardencorev1beta1.Shoot{}
		if garden.Get(t.Context(), client.ObjectKeyFromObject(r.Shoot), shoot) == nil {
			patch := client.MergeFrom(shoot.DeepCopy())
			metav1.SetMetaDataAnnotation(&shoot.ObjectMeta, runtimectrl.ConfirmDeletionAnnotation, "true")
			_ = garden.Patch(t.Context(), shoot, patch)
			_ = garden.Delete(t.Context(), shoot)
		}
	})
	return r
}

// applyAuth writes the structured-auth ConfigMap of a render.
func applyAuth(t *testing.T, c client.Client, r gardener.Rendered) {
	t.Helper()
	cm := r.AuthenticationConfig.DeepCopy()
	cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
	if err := c.Apply(t.Context(), ac, client.FieldOwner(runtimectrl.FieldOwner), client.ForceOwnership); err != nil {
		t.Fatalf("apply ConfigMap: %v", err)
	}
}

// applyShoot writes a shoot with a server-side apply, as the ApplyShoot step does.
func applyShoot(t *testing.T, c client.Client, shoot *gardencorev1beta1.Shoot) error {
	t.Helper()
	data, err := json.Marshal(shoot)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(runtimectrl.FieldOwner), client.ForceOwnership)
}
