package v1_test

import (
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// validRuntime returns the upstream AWS manifest, a Runtime the API server accepts.
func validRuntime(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.ReadObjects(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := objs[0]
	rt.SetName(name)
	return rt
}

// set changes one field of a Runtime, given as a dot-separated path.
func set(value any, path string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, value, strings.Split(path, ".")...); err != nil {
			panic(err)
		}
	}
}

// unset removes one field of a Runtime.
func unset(path string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		unstructured.RemoveNestedField(u.Object, strings.Split(path, ".")...)
	}
}

// setWorker changes one field of the first worker pool.
func setWorker(field string, value any) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		workers, _, _ := unstructured.NestedSlice(u.Object, "spec", "shoot", "provider", "workers")
		w := workers[0].(map[string]any)
		if err := unstructured.SetNestedField(w, value, strings.Split(field, ".")...); err != nil {
			panic(err)
		}
		_ = unstructured.SetNestedSlice(u.Object, workers, "spec", "shoot", "provider", "workers")
	}
}

// additionalWorkerLikeTheFirst adds a copy of the first worker pool as an additional pool.
func additionalWorkerLikeTheFirst(u *unstructured.Unstructured) {
	workers, _, _ := unstructured.NestedSlice(u.Object, "spec", "shoot", "provider", "workers")
	_ = unstructured.SetNestedSlice(u.Object, []any{workers[0]}, "spec", "shoot", "provider", "additionalWorkers")
}

// TestInvalidRuntimesAreRejected creates Runtimes a user can get wrong and expects the API
// server to reject each with a message that names the field and says what is wrong.
func TestInvalidRuntimesAreRejected(t *testing.T) {
	cases := []struct {
		name   string                           // what is wrong
		mutate func(*unstructured.Unstructured) // turns the valid Runtime into the invalid one
		field  string                           // the field the message must name
		says   string                           // a fragment of what the message must say
	}{
		{"shoot name with upper case", set("AWS-full", "spec.shoot.name"), "spec.shoot.name", "lower case letters"},
		{"shoot name too long", set("a-very-long-shoot-name-x", "spec.shoot.name"), "spec.shoot.name", "may not be more than 21"},
		{"shoot name missing", unset("spec.shoot.name"), "spec.shoot.name", "Required"},
		{"unknown purpose", set("fun", "spec.shoot.purpose"), "spec.shoot.purpose", "Unsupported value"},
		{"unknown provider type", set("alibaba", "spec.shoot.provider.type"), "spec.shoot.provider.type", "Unsupported value"},
		{"main oidc with offline keys", set("eyJrZXlzIjpbXX0=", "spec.shoot.kubernetes.kubeAPIServer.oidcConfig.jwks"), "spec.shoot.kubernetes.kubeAPIServer", "oidcConfig.jwks is not supported"},
		{"additional worker named like a worker", additionalWorkerLikeTheFirst, "spec.shoot.provider.additionalWorkers", "must not repeat a name"},
		{"unknown worker update strategy", setWorker("updateStrategy", "Sometimes"), "spec.shoot.provider.workers[0].updateStrategy", "Unsupported value"},
		{"unknown container runtime name", setWorker("cri.name", "docker"), "spec.shoot.provider.workers[0].cri.name", "Unsupported value"},
		{"data volume without size", setWorker("dataVolumes", []any{map[string]any{"name": "data"}}), "spec.shoot.provider.workers[0].dataVolumes[0].size", "Required"},
		{"empty secret binding", set("", "spec.shoot.secretBindingName"), "spec.shoot.secretBindingName", "at least 1"},
		{"kubernetes version not a version", set("latest", "spec.shoot.kubernetes.version"), "spec.shoot.kubernetes.version", "MAJOR.MINOR"},
		{"oidc issuer over http", set("http://tokens.example.com", "spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"), "spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL", "https URL"},
		{"oidc signing algorithm unknown", set([]any{"HS256"}, "spec.shoot.kubernetes.kubeAPIServer.oidcConfig.signingAlgs"), "spec.shoot.kubernetes.kubeAPIServer.oidcConfig.signingAlgs[0]", "Unsupported value"},
		{"additional oidc without client id", set([]any{map[string]any{"issuerURL": "https://other.example.com"}}, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig"), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig", "needs clientID and issuerURL"},
		{"additional oidc without issuer", set([]any{map[string]any{"clientID": "kyma"}}, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig"), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig", "needs clientID and issuerURL"},
		{"additional oidc issuer over http", set([]any{map[string]any{"clientID": "kyma", "issuerURL": "http://other.example.com"}}, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig"), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].issuerURL", "https URL"},
		{"acl with a bad CIDR", set([]any{"10.0.0.0/33"}, "spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs"), "spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs", "must hold CIDRs"},
		{"no workers", set([]any{}, "spec.shoot.provider.workers"), "spec.shoot.provider.workers", "at least 1"},
		{"worker minimum above maximum", setWorker("minimum", int64(25)), "spec.shoot.provider.workers[0]", "minimum must not exceed maximum"},
		{"negative worker minimum", setWorker("minimum", int64(-1)), "spec.shoot.provider.workers[0].minimum", "greater than or equal to 0"},
		{"worker without zones", setWorker("zones", []any{}), "spec.shoot.provider.workers[0].zones", "at least 1"},
		{"worker with an empty zone", setWorker("zones", []any{""}), "spec.shoot.provider.workers[0].zones[0]", "at least 1"},
		{"worker without machine type", setWorker("machine.type", ""), "spec.shoot.provider.workers[0].machine.type", "at least 1"},
		{"volume size not a quantity", setWorker("volume.size", "fifty"), "spec.shoot.provider.workers[0].volume.size", "positive quantity"},
		{"pods CIDR does not parse", set("100.64.0.0", "spec.shoot.networking.pods"), "spec.shoot.networking.pods", "must be a CIDR"},
		{"nodes CIDR out of range", set("10.250.0.0/33", "spec.shoot.networking.nodes"), "spec.shoot.networking.nodes", "must be a CIDR"},
		{"services CIDR missing", unset("spec.shoot.networking.services"), "spec.shoot.networking.services", "Required"},
		{"unknown network plugin", set("flannel", "spec.shoot.networking.type"), "spec.shoot.networking.type", "Unsupported value"},
		{"unknown failure tolerance", set("region", "spec.shoot.controlPlane.highAvailability.failureTolerance.type"), "spec.shoot.controlPlane.highAvailability.failureTolerance.type", "Unsupported value"},
		{"no administrators", set([]any{}, "spec.security.administrators"), "spec.security.administrators", "at least 1"},
		{"administrators missing", unset("spec.security.administrators"), "spec.security.administrators", "Required"},
		{"unknown field", set("x", "spec.shoot.colour"), "spec.shoot.colour", "unknown field"},
		{"runtime-id label missing", func(u *unstructured.Unstructured) {
			l := u.GetLabels()
			delete(l, infrav1.LabelRuntimeID)
			u.SetLabels(l)
		}, "metadata.labels", "missing: " + infrav1.LabelRuntimeID},
		{"shoot-name label differs from the shoot", func(u *unstructured.Unstructured) {
			l := u.GetLabels()
			l[infrav1.LabelShootName] = "other"
			u.SetLabels(l)
		}, "metadata.labels[" + infrav1.LabelShootName + "]", "must equal spec.shoot.name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := validRuntime(t, "invalid")
			tc.mutate(rt)
			err := env.Client.Create(t.Context(), rt, client.FieldValidation("Strict"), client.DryRunAll)
			if err == nil {
				t.Fatal("accepted, want rejected")
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("got %v, want an Invalid or BadRequest error", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.field) || !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not name %q with %q", msg, tc.field, tc.says)
			}
		})
	}
}

// TestRequiredLabelsAreAllEnforced removes every label and expects the message to list exactly
// the labels of api/v1, so the admission policy and the Go list cannot drift apart.
func TestRequiredLabelsAreAllEnforced(t *testing.T) {
	rt := validRuntime(t, "unlabelled")
	rt.SetLabels(nil)
	err := env.Client.Create(t.Context(), rt, client.DryRunAll)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want Invalid", err)
	}
	want := "missing: " + strings.Join(infrav1.RequiredRuntimeLabels, ", ")
	if !strings.Contains(err.Error(), want) {
		t.Errorf("message %q does not contain %q", err.Error(), want)
	}
}

// TestShootNameIsImmutable changes the shoot name of a stored Runtime.
func TestShootNameIsImmutable(t *testing.T) {
	rt := validRuntime(t, "immutable")
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), rt) })

	set("aws-other", "spec.shoot.name")(rt)
	l := rt.GetLabels()
	l[infrav1.LabelShootName] = "aws-other"
	rt.SetLabels(l)
	err := env.Client.Update(t.Context(), rt)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want Invalid", err)
	}
	if !strings.Contains(err.Error(), "spec.shoot.name is immutable") {
		t.Errorf("message %q does not say the shoot name is immutable", err.Error())
	}
}
