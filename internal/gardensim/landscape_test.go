package gardensim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
)

// createLandscapeObjects creates the Secrets and the audit policy a
// landscape's shoot references, unless they exist.
func createLandscapeObjects(t *testing.T) {
	t.Helper()
	secrets, policy := admissiontest.LandscapeObjects(namespace)
	objects := []client.Object{policy}
	for _, s := range secrets {
		objects = append(objects, s)
	}
	for _, o := range objects {
		if err := direct.Create(t.Context(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// registeredExtensions reads the registered Extension types from the admin
// API after a call.
func registeredExtensions(t *testing.T, reply string) []string {
	t.Helper()
	var types []string
	if err := json.Unmarshal([]byte(reply), &types); err != nil {
		t.Fatalf("decode %s: %v", reply, err)
	}
	return types
}

// TestUnregisteredExtension takes the acl registration away through the
// admin API: Gardener's ExtensionValidator refuses a shoot that lists acl
// until it is registered again.
func TestUnregisteredExtension(t *testing.T) {
	t.Cleanup(func() { _ = sim.SetExtensionRegistered(context.WithoutCancel(t.Context()), "acl", true) })
	if types := registeredExtensions(t, adminCall(t, http.MethodPut, "/extensions/acl", `{"registered":false}`, http.StatusOK)); slices.Contains(types, "acl") {
		t.Fatalf("acl is still registered: %v", types)
	}
	shoot := admissiontest.ValidShoot("aws", "adm-acl", namespace)
	shoot.Spec.Extensions = []gardencorev1beta1.Extension{admissiontest.Extension("acl", admissiontest.ACLConfig, false)}
	expectRefusal(t, garden.Create(t.Context(), shoot.DeepCopy(), client.DryRunAll), refusal{http.StatusForbidden, "Forbidden",
		"shoots.core.gardener.cloud \"adm-acl\" is forbidden: 1 error occurred:\n\t* given Shoot uses non-registered extension type: spec.extensions[0].type (\"acl\")\n\n"})

	if types := registeredExtensions(t, adminCall(t, http.MethodPut, "/extensions/acl", `{"registered":true}`, http.StatusOK)); !slices.Contains(types, "acl") {
		t.Fatalf("acl is not registered again: %v", types)
	}
	if err := garden.Create(t.Context(), shoot.DeepCopy(), client.DryRunAll); err != nil {
		t.Errorf("create with a registered acl refused: %v", err)
	}
	adminCall(t, http.MethodPut, "/extensions/no-such-extension", `{"registered":false}`, http.StatusNotFound)
}

// TestLandscapeShoot applies a shoot with everything a landscape's
// configuration adds, as the manager does: refused while the audit log
// secret is missing, then admitted, with the DNS provider's credentials
// synced, scheduled to a seed that supports EU access and created.
func TestLandscapeShoot(t *testing.T) {
	const name = "adm-landscape"
	createLandscapeObjects(t)
	shoot := admissiontest.ValidShoot("aws", name, namespace)
	admissiontest.WithLandscape(shoot)
	shoot.Spec.Resources[1].ResourceRef.Name = "missing-tenant"
	expectRefusal(t, applyShoot(t.Context(), shoot), refusal{http.StatusForbidden, "Forbidden",
		`shoots.core.gardener.cloud "adm-landscape" is forbidden: failed to resolve resource reference "auditlog-credentials": secrets "missing-tenant" not found`})

	shoot.Spec.Resources[1].ResourceRef.Name = admissiontest.AuditLogSecret
	if err := applyShoot(t.Context(), shoot); err != nil {
		t.Fatalf("apply: %v", err)
	}
	t.Cleanup(func() { confirmAndDelete(t, name) })
	created := waitForOperation(t, name, gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded)
	p := created.Spec.DNS.Providers[0] //nolint:staticcheck // SA1019: the deprecated providers the manager still writes.
	if p.CredentialsRef == nil || p.CredentialsRef.Name != admissiontest.DNSSecret || ptr.Deref(created.Spec.DNS.Domain, "") != name+"."+admissiontest.DomainPrefix {
		t.Errorf("dns = %+v, provider credentials %+v", created.Spec.DNS, p.CredentialsRef)
	}
	seed := &gardencorev1beta1.Seed{}
	if err := direct.Get(t.Context(), client.ObjectKey{Name: ptr.Deref(created.Spec.SeedName, "")}, seed); err != nil || len(seed.Spec.AccessRestrictions) != 1 {
		t.Errorf("seed %q: %v, access restrictions %+v", ptr.Deref(created.Spec.SeedName, ""), err, seed.Spec.AccessRestrictions)
	}

	t.Run("an update that breaks the audit policy is refused", func(t *testing.T) {
		configMaps, err := client.New(sim.RESTConfig(), client.Options{Scheme: coreScheme(t)})
		if err != nil {
			t.Fatal(err)
		}
		_, policy := admissiontest.LandscapeObjects(namespace)
		if err := configMaps.Get(t.Context(), client.ObjectKeyFromObject(policy), policy); err != nil {
			t.Fatal(err)
		}
		policy.Data["policy"] = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: All\n"
		expectRefusal(t, configMaps.Update(t.Context(), policy), refusal{http.StatusUnprocessableEntity, "",
			`admission webhook "audit-policies.gardener.cloud" denied the request: provided invalid audit policy: [rules[0].level: Unsupported value: "All": supported values: "None", "Metadata", "Request", "RequestResponse"]`})
	})
	t.Run("an update with an unknown feature gate is invalid", func(t *testing.T) {
		again := shoot.DeepCopy()
		again.Spec.Kubernetes.Version = created.Spec.Kubernetes.Version
		again.Spec.Kubernetes.KubeAPIServer.FeatureGates = map[string]bool{"MadeUpFeature": true}
		expectRefusal(t, applyShoot(t.Context(), again), refusal{http.StatusUnprocessableEntity, "Invalid",
			`Shoot.core.gardener.cloud "adm-landscape" is invalid: spec.kubernetes.kubeAPIServer.featureGates.MadeUpFeature: Invalid value: "MadeUpFeature": unknown feature gate MadeUpFeature`})
	})
}
