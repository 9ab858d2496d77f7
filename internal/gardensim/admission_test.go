package gardensim_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
)

// refusal is the status a refused write must carry.
type refusal struct {
	code    int32  // HTTP status code
	reason  string // metav1.StatusReason
	message string // exact message
}

// expectRefusal compares an error with the expected refusal.
func expectRefusal(t *testing.T, err error, want refusal) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error = %v (%T), want a status", err, err)
	}
	s := status.Status()
	if s.Code != want.code || string(s.Reason) != want.reason || s.Message != want.message {
		t.Errorf("refusal = %d %q %q\nwant      %d %q %q", s.Code, s.Reason, s.Message, want.code, want.reason, want.message)
	}
}

// applyShoot creates or updates a shoot with server-side apply as the
// manager does, field manager infrastructure-manager, forced.
func applyShoot(ctx context.Context, shoot *gardencorev1beta1.Shoot) error {
	shoot = shoot.DeepCopy()
	shoot.APIVersion, shoot.Kind = gardencorev1beta1.SchemeGroupVersion.String(), "Shoot"
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(shoot)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return garden.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("infrastructure-manager"), client.ForceOwnership)
}

// TestAdmissionRefusesThroughTheProxy sends wrong shoots as the manager
// does and checks Gardener's replies.
func TestAdmissionRefusesThroughTheProxy(t *testing.T) {
	if err := direct.Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-config-adm-authn", Namespace: namespace},
		Data:       map[string]string{"config.yaml": "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: http://kyma.example\n    audiences: [kyma]\n  claimMappings:\n    username: {claim: sub, prefix: \"\"}\n"},
	}); err != nil {
		t.Fatal(err)
	}
	authn := func(configMap string) func(*gardencorev1beta1.Shoot) {
		return func(s *gardencorev1beta1.Shoot) {
			s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{
				StructuredAuthentication: &gardencorev1beta1.StructuredAuthentication{ConfigMapName: configMap},
			}
		}
	}
	tests := []struct {
		name   string                         // case name, also the shoot's
		apply  bool                           // server-side apply instead of create
		change func(*gardencorev1beta1.Shoot) // what makes the valid shoot wrong
		want   refusal                        // Gardener's reply
	}{
		{
			name: "adm-no-infra", change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.InfrastructureConfig = nil },
			want: refusal{http.StatusUnprocessableEntity, "", `admission webhook "validation.aws.provider.extensions.gardener.cloud" denied the request: spec.provider.infrastructureConfig: Required value: InfrastructureConfig must be set for AWS shoots`},
		},
		{
			name: "adm-apply-zone", apply: true, change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"eu-central-1b"} },
			want: refusal{http.StatusUnprocessableEntity, "", `admission webhook "validation.aws.provider.extensions.gardener.cloud" denied the request: spec.provider.workers[0].zones[0]: Invalid value: "eu-central-1b": supported values [eu-central-1a]`},
		},
		{
			name: "adm-oidc", apply: true, change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{OIDCConfig: &gardencorev1beta1.OIDCConfig{ClientID: ptr.To("kyma"), IssuerURL: ptr.To("https://kyma.example")}} //nolint:staticcheck // SA1019: the deprecated field under test.
			},
			want: refusal{http.StatusUnprocessableEntity, "Invalid", `Shoot.core.gardener.cloud "adm-oidc" is invalid: spec.kubernetes.kubeAPIServer.oidcConfig: Invalid value: {"CABundle":null,"ClientAuthentication":null,"ClientID":"kyma","GroupsClaim":null,"GroupsPrefix":null,"IssuerURL":"https://kyma.example","RequiredClaims":null,"SigningAlgs":null,"UsernameClaim":null,"UsernamePrefix":null}: for Kubernetes versions >= 1.32, oidcConfig field is no longer supported`},
		},
		{
			name: "adm-machine", change: func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Machine.Type = "m7.huge" },
			want: refusal{http.StatusForbidden, "Forbidden", `shoots.core.gardener.cloud "adm-machine" is forbidden: spec.provider.workers[0].machine.type: Unsupported value: "m7.huge": supported values: "g4dn.xlarge", "m5.large", "m5.xlarge", "m6i.2xlarge", "m6i.large", "m6i.xlarge"`},
		},
		{
			name: "adm-no-cm", apply: true, change: authn("structured-auth-config-adm-no-cm"),
			want: refusal{http.StatusForbidden, "Forbidden", `shoots.core.gardener.cloud "adm-no-cm" is forbidden: failed to resolve structured authentication config map reference: configmaps "structured-auth-config-adm-no-cm" not found`},
		},
		{
			name: "adm-authn", apply: true, change: authn("structured-auth-config-adm-authn"),
			want: refusal{http.StatusUnprocessableEntity, "", `admission webhook "authentication-configurations.gardener.cloud" denied the request: provided invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://kyma.example": URL scheme must be https]`},
		},
		// Refusals of Gardener's own code that no rule of this repository's had to copy.
		{
			name: "adm--hyphens", change: func(*gardencorev1beta1.Shoot) {},
			want: refusal{http.StatusUnprocessableEntity, "Invalid", `Shoot.core.gardener.cloud "adm--hyphens" is invalid: metadata.name: Invalid value: "adm--hyphens": name may not contain two consecutive hyphens`},
		},
		{
			name: "adm-no-binding", change: func(s *gardencorev1beta1.Shoot) { s.Spec.SecretBindingName = ptr.To("nope") }, //nolint:staticcheck // SA1019: the fixture's shoot is below Kubernetes 1.34.
			want: refusal{http.StatusForbidden, "Forbidden", `shoots.core.gardener.cloud "adm-no-binding" is forbidden: secretbinding.core.gardener.cloud "nope" not found`},
		},
		{
			name: "adm-cp-pool", change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.Provider.Workers[0].ControlPlane = &gardencorev1beta1.WorkerControlPlane{}
			},
			// Gardener takes a shoot with a control-plane pool for a self-hosted one and judges it
			// as such (the deleted copy of its rules answered differently).
			want: refusal{http.StatusUnprocessableEntity, "Invalid", `Shoot.core.gardener.cloud "adm-cp-pool" is invalid: [` +
				`spec.provider.workers[0].minimum: Invalid value: 1: self-hosted shoots only support minimum=maximum=1 for the control plane worker pool (might change in the future), ` +
				`metadata.namespace: Invalid value: "garden-test": self-hosted shoots must be in the "garden" namespace]`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shoot := admissiontest.ValidShoot("aws", tc.name, namespace)
			tc.change(shoot)
			var err error
			if tc.apply {
				err = applyShoot(t.Context(), shoot)
			} else {
				err = garden.Create(t.Context(), shoot)
			}
			expectRefusal(t, err, tc.want)
			if err := direct.Get(t.Context(), client.ObjectKeyFromObject(shoot), &gardencorev1beta1.Shoot{}); !apierrors.IsNotFound(err) {
				t.Errorf("a refused shoot was stored: %v", err)
			}
		})
	}
}

// TestAdmissionOfUpdates applies changes to a stored shoot, mutations
// included, and checks scheduling, the default domain and the refusals.
func TestAdmissionOfUpdates(t *testing.T) {
	const name = "adm-update"
	shoot := admissiontest.ValidShoot("aws", name, namespace)
	shoot.Spec.Kubernetes.Version = "1.32"
	shoot.Spec.Provider.Workers[0].Machine.Image.Version = nil
	if err := applyShoot(t.Context(), shoot); err != nil {
		t.Fatalf("apply: %v", err)
	}
	t.Cleanup(func() { confirmAndDelete(t, name) })

	stored := &gardencorev1beta1.Shoot{}
	eventually(t, 30*time.Second, "scheduling", func(ctx context.Context) (bool, error) {
		err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), stored)
		return err == nil && stored.Spec.SeedName != nil && stored.Spec.DNS != nil && stored.Spec.DNS.Domain != nil, err
	})
	if got := stored.Spec.Kubernetes.Version; got != "1.32.8" {
		t.Errorf("defaulted kubernetes version = %q, want 1.32.8", got)
	}
	if got := ptr.Deref(stored.Spec.Provider.Workers[0].Machine.Image.Version, ""); got != admissiontest.ImageVersion {
		t.Errorf("defaulted image version = %q, want %s", got, admissiontest.ImageVersion)
	}
	if *stored.Spec.SeedName != "aws-eu-central-1" || *stored.Spec.DNS.Domain != name+"."+project+"."+gardensim.DefaultDomain {
		t.Errorf("seed %q, domain %q", *stored.Spec.SeedName, *stored.Spec.DNS.Domain)
	}

	t.Run("an apply that never lists spec.dns keeps the domain", func(t *testing.T) {
		again := admissiontest.ValidShoot("aws", name, namespace)
		again.Spec.Kubernetes.Version = "1.32.8"
		again.Spec.Provider.Workers[0].Maximum = 4
		if err := applyShoot(t.Context(), again); err != nil {
			t.Fatalf("apply: %v", err)
		}
		got := &gardencorev1beta1.Shoot{}
		if err := garden.Get(t.Context(), client.ObjectKeyFromObject(shoot), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.DNS == nil || ptr.Deref(got.Spec.DNS.Domain, "") != *stored.Spec.DNS.Domain || got.Spec.Provider.Workers[0].Maximum != 4 {
			t.Errorf("dns %+v, maximum %d", got.Spec.DNS, got.Spec.Provider.Workers[0].Maximum)
		}
	})
	t.Run("a Kubernetes downgrade is invalid", func(t *testing.T) {
		again := admissiontest.ValidShoot("aws", name, namespace)
		again.Spec.Kubernetes.Version = "1.31.10"
		expectRefusal(t, applyShoot(t.Context(), again), refusal{http.StatusUnprocessableEntity, "Invalid",
			`Shoot.core.gardener.cloud "adm-update" is invalid: [spec.kubernetes.version: Forbidden: kubernetes version downgrade is not supported, spec.provider.workers[0].kubernetes.version: Forbidden: kubernetes version downgrade is not supported]`})
	})
	t.Run("a changed zone network is forbidden", func(t *testing.T) {
		again := admissiontest.ValidShoot("aws", name, namespace)
		again.Spec.Kubernetes.Version = "1.32.8"
		again.Spec.Provider.InfrastructureConfig.Raw = []byte(strings.Replace(string(again.Spec.Provider.InfrastructureConfig.Raw), `"workers":"10.250.0.0/19"`, `"workers":"10.250.0.0/20"`, 1))
		// The aws extension, built on Gardener v1.136's webhook library, answers field errors with
		// admission.Errored: 422 without a reason.
		expectRefusal(t, applyShoot(t.Context(), again), refusal{http.StatusUnprocessableEntity, "",
			`admission webhook "validation.aws.provider.extensions.gardener.cloud" denied the request: networks.zones[0].workers: Invalid value: "10.250.0.0/20": field is immutable`})
	})
}

// TestUnreadySeedRegion checks that a shoot enforcing the region of
// unready seeds stays unscheduled, as Gardener's scheduler leaves it, and
// is scheduled once the region is ready again.
func TestUnreadySeedRegion(t *testing.T) {
	const name = "adm-unready"
	adminCall(t, http.MethodPut, "/seeds/regions/eu-west-1", `{"ready":false}`, http.StatusOK)
	t.Cleanup(func() { _ = sim.SetRegionReady(context.WithoutCancel(t.Context()), "eu-west-1", true) })

	shoot := admissiontest.ValidShoot("aws", name, namespace)
	shoot.Spec.Region = "eu-west-1"
	shoot.Spec.Provider.Workers[0].Zones = []string{"eu-west-1a"}
	shoot.Spec.Provider.InfrastructureConfig.Raw = []byte(strings.ReplaceAll(string(shoot.Spec.Provider.InfrastructureConfig.Raw), "eu-central-1a", "eu-west-1a"))
	shoot.Spec.SeedSelector = &gardencorev1beta1.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{gardensim.LabelSeedRegion: "eu-west-1"}}}
	if err := garden.Create(t.Context(), shoot); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { confirmAndDelete(t, name) })

	pending := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStatePending)
	want := "Failed to schedule Shoot: none out of the 14 seeds has the matching labels required by seed selector of 'Shoot' (selector: 'seed.gardener.cloud/region=eu-west-1')"
	if pending.Status.LastOperation.Description != want || pending.Spec.SeedName != nil {
		t.Errorf("lastOperation %q, seed %v; want %q", pending.Status.LastOperation.Description, pending.Spec.SeedName, want)
	}
	events := &corev1.EventList{}
	eventually(t, 10*time.Second, "SchedulingFailed event", func(ctx context.Context) (bool, error) {
		if err := direct.List(ctx, events, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == gardencorev1beta1.ShootEventSchedulingFailed {
				return true, nil
			}
		}
		return false, nil
	})

	adminCall(t, http.MethodPut, "/seeds/regions/eu-west-1", `{"ready":true}`, http.StatusOK)
	created := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
	if ptr.Deref(created.Spec.SeedName, "") != "aws-eu-west-1" {
		t.Errorf("seed = %v, want aws-eu-west-1", created.Spec.SeedName)
	}
}

// TestGardenServesProfilesAndSeeds reads what the manager may check before
// it creates a shoot.
func TestGardenServesProfilesAndSeeds(t *testing.T) {
	profile := &gardencorev1beta1.CloudProfile{}
	if err := garden.Get(t.Context(), client.ObjectKey{Name: "converged-cloud-kyma"}, profile); err != nil || profile.Spec.Type != "openstack" {
		t.Fatalf("cloud profile: %v, %+v", err, profile.Spec.Type)
	}
	seeds := &gardencorev1beta1.SeedList{}
	if err := garden.List(t.Context(), seeds, client.MatchingLabels{gardensim.LabelSeedRegion: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	if len(seeds.Items) != 1 || seeds.Items[0].Spec.Provider.Type != "azure" || !conditionTrue(seeds.Items[0].Status.Conditions, gardencorev1beta1.GardenletReady) {
		t.Errorf("seeds of westeurope = %+v", seeds.Items)
	}
}

// TestAuthenticationConfigMapUpdate checks that a ConfigMap a shoot
// references keeps a valid configuration.
func TestAuthenticationConfigMapUpdate(t *testing.T) {
	const name = "adm-cm"
	// The manager writes ConfigMaps through the Gardener API too.
	configMaps, err := client.New(sim.RESTConfig(), client.Options{Scheme: coreScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	cm := admissiontest.AuthenticationConfigMap(name, namespace)
	if err := configMaps.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	shoot := admissiontest.ValidShoot("aws", name, namespace)
	shoot.Spec.Kubernetes.KubeAPIServer = &gardencorev1beta1.KubeAPIServerConfig{
		StructuredAuthentication: &gardencorev1beta1.StructuredAuthentication{ConfigMapName: cm.Name},
	}
	if err := applyShoot(t.Context(), shoot); err != nil {
		t.Fatalf("apply: %v", err)
	}
	t.Cleanup(func() { confirmAndDelete(t, name) })
	cm.Data["config.yaml"] = strings.Replace(cm.Data["config.yaml"], "https://", "http://", 1)
	expectRefusal(t, configMaps.Update(t.Context(), cm), refusal{http.StatusUnprocessableEntity, "",
		`admission webhook "authentication-configurations.gardener.cloud" denied the request: provided invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://kyma.accounts.ondemand.com": URL scheme must be https]`})
}
