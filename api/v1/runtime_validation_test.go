package v1_test

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// setLabel sets one label of a Runtime.
func setLabel(key, value string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		l := u.GetLabels()
		l[key] = value
		u.SetLabels(l)
	}
}

// setAnnotation sets one annotation of a Runtime.
func setAnnotation(key, value string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[key] = value
		u.SetAnnotations(a)
	}
}

// setName renames a Runtime.
func setName(name string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { u.SetName(name) }
}

// setShootName renames the shoot and its label alike, so that only the name itself can be wrong.
func setShootName(name string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		set(name, "spec.shoot.name")(u)
		setLabel(infrav1.LabelShootName, name)(u)
	}
}

// setAdministrator makes name the only administrator.
func setAdministrator(name string) func(*unstructured.Unstructured) {
	return set([]any{name}, "spec.security.administrators")
}

// oidc is the path of the main OIDC provider's fields.
const oidc = "spec.shoot.kubernetes.kubeAPIServer.oidcConfig"

// setIssuer sets the main OIDC provider's issuer.
func setIssuer(url string) func(*unstructured.Unstructured) { return set(url, oidc+".issuerURL") }

// setAdditionalOIDC makes entry, with a client ID, the only additional OIDC provider.
func setAdditionalOIDC(entry map[string]any) func(*unstructured.Unstructured) {
	entry["clientID"] = "kyma"
	if _, ok := entry["issuerURL"]; !ok {
		entry["issuerURL"] = "https://team.example.com"
	}
	return set([]any{entry}, "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig")
}

// remoteURL is the path of the only registry cache's remote URL (setRemoteURL).
const remoteURL = "spec.imageRegistryCache[0].config.remoteURL"

// setRemoteURL makes a cache of images.example.com that pulls from url the only registry cache.
func setRemoteURL(url string) func(*unstructured.Unstructured) {
	return set([]any{map[string]any{"name": "images", "namespace": "default", "uid": "c0ffee",
		"config": map[string]any{"upstream": "images.example.com", "remoteURL": url}}}, "spec.imageRegistryCache")
}

// b64String encodes s as a []byte field of the API carries it.
func b64String(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

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
		// Identity that cannot be borrowed: Kubernetes' own users and groups, and names no
		// provider issues, never become cluster-admins.
		{"administrator system:masters", setAdministrator("system:masters"), "spec.security.administrators[0]", "must not start with system:"},
		{"administrator system:anonymous", setAdministrator("system:anonymous"), "spec.security.administrators[0]", "must not start with system:"},
		{"administrator a service account", setAdministrator("system:serviceaccount:kube-system:default"), "spec.security.administrators[0]", "must not start with system:"},
		{"administrator with a leading space", setAdministrator(" admin@example.com"), "spec.security.administrators[0]", "white space"},
		{"administrator with a trailing no-break space", setAdministrator("admin@example.com\u00a0"), "spec.security.administrators[0]", "white space"},
		{"administrator with an escape character", setAdministrator("adm\x1bin@example.com"), "spec.security.administrators[0]", "control or format characters"},
		{"administrator with a right-to-left override", setAdministrator("admin\u202e@example.com"), "spec.security.administrators[0]", "control or format characters"},
		// OIDC issuers the runtime's API server must not be sent to.
		{"oidc issuer with user info", setIssuer("https://user:password@tokens.example.com"), oidc + ".issuerURL", "must not contain user info"},
		{"oidc issuer on loopback", setIssuer("https://127.0.0.1:8443"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer on IPv6 loopback", setIssuer("https://[::1]/"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer on the metadata address", setIssuer("https://169.254.169.254/latest"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer in 10/8", setIssuer("https://10.1.2.3"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer in 172.16/12", setIssuer("https://172.31.255.1"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer in 192.168/16", setIssuer("https://192.168.1.1"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer in fc00::/7", setIssuer("https://[fd00::1]"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer unspecified", setIssuer("https://0.0.0.0"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer an IPv4-mapped loopback", setIssuer("https://[::ffff:127.0.0.1]"), oidc + ".issuerURL", "must not be a loopback"},
		{"oidc issuer a loopback as one number", setIssuer("https://2130706433"), oidc + ".issuerURL", "name its host by a DNS name"},
		{"oidc issuer localhost", setIssuer("https://LocalHost:8443"), oidc + ".issuerURL", "must not be localhost"},
		{"additional oidc issuer private", setAdditionalOIDC(map[string]any{"issuerURL": "https://10.0.0.1"}), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].issuerURL", "must not be a loopback"},
		{"additional oidc jwks garbage", setAdditionalOIDC(map[string]any{"jwks": b64String("garbage")}), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].jwks", "must be a JSON Web Key Set"},
		{"oidc username prefix system:", set("system:", oidc+".usernamePrefix"), oidc + ".usernamePrefix", "must not start with system:"},
		{"oidc groups prefix system:", set("system:", oidc+".groupsPrefix"), oidc + ".groupsPrefix", "must not start with system:"},
		{"additional oidc groups prefix system:", setAdditionalOIDC(map[string]any{"groupsPrefix": "system:m"}), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].groupsPrefix", "must not start with system:"},
		{"oidc client authentication", set(map[string]any{"secret": "s3cr3t"}, oidc+".clientAuthentication"), oidc + ".clientAuthentication", "is not supported"},
		{"additional oidc client authentication", setAdditionalOIDC(map[string]any{"clientAuthentication": map[string]any{"secret": "s3cr3t"}}), "spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].clientAuthentication", "is not supported"},
		// Registry caches that would serve what they find on the node itself.
		{"registry cache on the metadata address", setRemoteURL("http://169.254.169.254"), remoteURL, "must not be a loopback"},
		{"registry cache on loopback", setRemoteURL("https://127.0.0.1:5000"), remoteURL, "must not be a loopback"},
		{"registry cache on IPv6 loopback", setRemoteURL("https://[::1]:5000"), remoteURL, "must not be a loopback"},
		{"registry cache on an IPv4-mapped loopback", setRemoteURL("https://[::ffff:127.0.0.1]"), remoteURL, "must not be a loopback"},
		{"registry cache on localhost", setRemoteURL("http://localhost:5000"), remoteURL, "must not be a loopback"},
		{"registry cache with user info", setRemoteURL("https://user:password@images.example.com"), remoteURL, "without user info"},
		{"registry cache with a path", setRemoteURL("https://images.example.com/v2/library"), remoteURL, "without user info, path"},
		{"registry cache over ftp", setRemoteURL("ftp://images.example.com"), remoteURL, "scheme http or https"},
		{"registry cache without a scheme", setRemoteURL("images.example.com"), remoteURL, "scheme http or https"},
		// Names that would fail only after the shoot exists.
		{"runtime id with upper case", setLabel(infrav1.LabelRuntimeID, "Runtime-ID"), "metadata.labels[" + infrav1.LabelRuntimeID + "]", "must be a DNS label"},
		{"runtime id with a dot", setLabel(infrav1.LabelRuntimeID, "runtime.id"), "metadata.labels[" + infrav1.LabelRuntimeID + "]", "must be a DNS label"},
		{"runtime id with an underscore", setLabel(infrav1.LabelRuntimeID, "runtime_id"), "metadata.labels[" + infrav1.LabelRuntimeID + "]", "must be a DNS label"},
		{"runtime name of 64 characters", setName(strings.Repeat("n", 64)), "metadata.name", "at most 63 characters"},
		{"shoot name with --", setShootName("aws--full"), "spec.shoot.name", "must not contain '--'"},
		// Only a time asks for a retry; anything else would be echoed into the status.
		{"retry request a word", setAnnotation(infrav1.RetryRequestedAtAnnotation, "again"), "metadata.annotations[" + infrav1.RetryRequestedAtAnnotation + "]", "RFC 3339"},
		{"retry request a time without a zone", setAnnotation(infrav1.RetryRequestedAtAnnotation, "2026-01-01T00:05:00"), "metadata.annotations[" + infrav1.RetryRequestedAtAnnotation + "]", "RFC 3339"},
		{"retry request of 208 KB", setAnnotation(infrav1.RetryRequestedAtAnnotation, "2026-01-01T00:05:00Z"+strings.Repeat("x", 208<<10)), "metadata.annotations[" + infrav1.RetryRequestedAtAnnotation + "]", "RFC 3339"},
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

// TestNearMissesAreAccepted creates Runtimes that come close to the rules of
// TestInvalidRuntimesAreRejected without breaking them, so that no rule refuses more than it
// says.
func TestNearMissesAreAccepted(t *testing.T) {
	cases := []struct {
		name   string                           // what comes close to a rule
		mutate func(*unstructured.Unstructured) // turns the valid Runtime into the near miss
	}{
		{"administrator that mentions system", setAdministrator("system-admin@example.com")},
		{"administrator with an inner space", setAdministrator("Jane Doe")},
		{"administrator with a non-ASCII letter", setAdministrator("jürgen@example.com")},
		{"oidc issuer with a port and a path", setIssuer("https://tokens.example.com:8443/tenant/v2")},
		{"oidc issuer whose first label is a number", setIssuer("https://10.tokens.example.com")},
		{"oidc issuer with @ in the path", setIssuer("https://tokens.example.com/users/@me")},
		{"oidc issuer on a public address", setIssuer("https://203.0.113.10/")},
		{"oidc issuer on a public IPv6 address", setIssuer("https://[2001:db8::1]/")},
		{"oidc issuer on a host named after localhost", setIssuer("https://localhost.example.com")},
		{"additional oidc jwks with white space", setAdditionalOIDC(map[string]any{"jwks": b64String("\n { \"keys\" : [ ] }\n")})},
		{"oidc username prefix that mentions system", set("oidc:system:", oidc+".usernamePrefix")},
		{"oidc groups prefix systems", set("systems:", oidc+".groupsPrefix")},
		{"runtime id of 63 characters", setLabel(infrav1.LabelRuntimeID, strings.Repeat("r", 63))},
		{"runtime id as a UUID", setLabel(infrav1.LabelRuntimeID, "0d6c3e4a-8f3e-4c1b-9a1e-3f7a2b9c1d00")},
		{"runtime name of 63 characters", setName(strings.Repeat("n", 63))},
		{"shoot name with single hyphens", setShootName("aws-full-1")},
		{"registry cache on a private address", setRemoteURL("http://10.250.0.10:5000")},
		{"registry cache with a trailing slash", setRemoteURL("https://images.example.com/")},
		{"registry cache on a public IPv6 address", setRemoteURL("https://[2001:db8::1]:443")},
		{"retry request with nanoseconds and an offset", setAnnotation(infrav1.RetryRequestedAtAnnotation, "2026-01-01T00:05:00.123456789+02:00")},
		{"retry request as kubectl runtime retry writes it", setAnnotation(infrav1.RetryRequestedAtAnnotation, "2026-01-01T00:05:00Z")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := validRuntime(t, "near-miss")
			tc.mutate(rt)
			if err := env.Client.Create(t.Context(), rt, client.FieldValidation("Strict"), client.DryRunAll); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
}

// TestStoredRetryRequestDoesNotBlockUpdates: a value of the retry annotation stored before the
// policy refused it must not keep anyone, the manager included, from updating the Runtime; a
// changed value is checked. The value is stored while the policy's binding is away.
func TestStoredRetryRequestDoesNotBlockUpdates(t *testing.T) {
	rt := validRuntime(t, "old-retry-request")
	if err := env.Client.Create(t.Context(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), rt) })

	withoutPolicy(t, func() {
		setAnnotation(infrav1.RetryRequestedAtAnnotation, "again")(rt)
		if err := env.Client.Update(t.Context(), rt); err != nil {
			t.Fatalf("store a value that is no time: %v", err)
		}
	})
	setLabel("example.test/unrelated", "x")(rt)
	if err := env.Client.Update(t.Context(), rt); err != nil {
		t.Fatalf("an update that keeps the stored value: %v", err)
	}
	setAnnotation(infrav1.RetryRequestedAtAnnotation, "again and again")(rt)
	err := env.Client.Update(t.Context(), rt)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("a changed value that is no time: got %v, want Invalid naming RFC 3339", err)
	}
}

// withoutPolicy runs f while the binding of the Runtime policy is deleted, and returns once the
// policy is in force again.
func withoutPolicy(t *testing.T, f func()) {
	t.Helper()
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	key := client.ObjectKey{Name: "runtime-required-labels.infrastructuremanager.kyma-project.io"}
	if err := env.Client.Get(t.Context(), key, binding); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	probe := validRuntime(t, "policy-probe")
	setAnnotation(infrav1.RetryRequestedAtAnnotation, "probe")(probe)
	policyRefuses := func(ctx context.Context) bool {
		return apierrors.IsInvalid(env.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll))
	}
	if err := testenv.Eventually(t.Context(), 30*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		return !policyRefuses(ctx), nil
	}); err != nil {
		t.Fatalf("policy still in force: %v", err)
	}
	f()
	restored := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: key.Name}, Spec: binding.Spec}
	if err := env.Client.Create(t.Context(), restored); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Eventually(t.Context(), 30*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		return policyRefuses(ctx), nil
	}); err != nil {
		t.Fatalf("policy not in force again: %v", err)
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
