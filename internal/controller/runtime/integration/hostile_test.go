package integration_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientretry "k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// expectation is what a hostile manifest must come to; exactly one of rejected, failed and
// handled.
type expectation interface{ kind() string }

// rejected: the API server refuses the manifest, and its error names field.
type rejected struct{ field string }

// failed: the Runtime is admitted and ends Failed, with reason as its retry record's or its
// Ready condition's reason; names, when set, is a fragment its retry message must hold (the
// field or object at fault), and also, when set, checks the world afterwards.
type failed struct {
	reason string
	names  string
	also   func(t *testing.T, rt *infrav1.Runtime)
}

// handled: the manifest is admitted and check asserts the correct outcome.
type handled struct {
	check func(t *testing.T, hc *hostileCase)
}

func (rejected) kind() string { return "rejected" }
func (failed) kind() string   { return "failed" }
func (handled) kind() string  { return "handled" }

// hostileCase is one hostile or careless manifest and what becomes of it.
type hostileCase struct {
	// name says what is hostile about the manifest, and why the expectation is right.
	name string
	// runtime mutates the upstream aws fixture (named after the case, with its own shoot and
	// runtime id) into the manifest; nil when the case writes only object.
	runtime func(rt *infrav1.Runtime)
	// update, when set, is applied to the created Runtime as an update: the expectation is about
	// that update.
	update func(rt *infrav1.Runtime)
	// afterReady, when set, waits for the created Runtime to be Ready and then changes the world
	// behind its back (a Secret, a shoot, a GardenerCluster): the expectation is about that.
	afterReady func(t *testing.T, rt *infrav1.Runtime)
	// object returns a manifest other than a Runtime (a GardenerCluster).
	object func() client.Object
	// plant, when set, returns a Secret someone else creates before the Runtime.
	plant func(t *testing.T, rt *infrav1.Runtime) *corev1.Secret
	// dryRun creates the manifest with dry run only: the API server answers with the object as
	// it would store it.
	dryRun bool
	// want is the one expectation of the case.
	want expectation

	// rt is the created Runtime, obj the created object (or the dry-run answer), planted the
	// created Secret of plant, err the answer of the API server to the manifest (or to update).
	rt      *infrav1.Runtime
	obj     client.Object
	planted *corev1.Secret
	err     error
}

// TestHostileManifests writes hostile or careless manifests, Runtimes, GardenerClusters and
// kubeconfig Secrets, against the real API server, the simulator and the running manager. Each
// is rejected at admission naming the field, ends Failed with a reason, or is handled in a way
// the case asserts; none is silently wrong. Two good runtimes provisioned before are Ready and
// untouched afterwards (their shoots and authentication ConfigMaps as they were, even after the
// hostile Runtimes naming their shoot or runtime id are deleted), and the manager never stopped
// or panicked.
func TestHostileManifests(t *testing.T) {
	ctx := t.Context()
	panicsBefore := counterSum(t, "controller_runtime_reconcile_panics_total")
	good := []*infrav1.Runtime{newRuntime(t, "hgood-1"), newRuntime(t, "hgood-2")}
	for i, rt := range good {
		good[i] = waitForRuntime(t, rt, 3*time.Minute, "good runtime Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	}
	g1 := good[0]
	g1ID := g1.Labels[infrav1.LabelRuntimeID]
	before := snapshotGood(t, good)

	// Servers named by hostile kubeconfigs: no request may reach them.
	execTrap, fileTrap, tokenTrap, insecureTrap, plainTrap := newTrap(t, true), newTrap(t, true), newTrap(t, true), newTrap(t, true), newTrap(t, false)
	squatTrap := newTrap(t, true)
	tiny := `{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"k1","n":"AQAB","e":"AQAB"}]}`

	cases := []*hostileCase{
		// Administrators.
		{name: "administrator system:masters would grant Kubernetes' own group", runtime: admins("system:masters"),
			want: rejected{"spec.security.administrators[0]"}},
		{name: "administrator that is a service account of kube-system", runtime: admins("alice@example.com", "system:serviceaccount:kube-system:default"),
			want: rejected{"spec.security.administrators[1]"}},
		{name: "administrator with a leading space no provider issues", runtime: admins(" alice@example.com"),
			want: rejected{"spec.security.administrators[0]"}},
		{name: "administrator with a trailing newline", runtime: admins("alice@example.com\n"),
			want: rejected{"spec.security.administrators[0]"}},
		{name: "administrator with a control character", runtime: admins("ali\u0007ce@example.com"),
			want: rejected{"spec.security.administrators[0]"}},
		{name: "administrator with an invisible format character", runtime: admins("alice\u200e@example.com"),
			want: rejected{"spec.security.administrators[0]"}},
		{name: "administrator with a non-breaking space at the end", runtime: admins("alice@example.com\u00a0"),
			want: rejected{"spec.security.administrators[0]"}},
		// The main OIDC provider.
		{name: "issuer over plain http", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("http://issuer.example.com") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "issuer with user info", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("https://user:secret@issuer.example.com") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "issuer on loopback", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("https://127.0.0.1:8443/") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "issuer on the link-local metadata address", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("https://169.254.169.254/latest") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "issuer in a private range", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("https://10.0.0.1/") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "issuer on IPv6 loopback", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("https://[::1]/") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "issuer on localhost", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("https://LocalHost.:443/") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.issuerURL"}},
		{name: "usernamePrefix system: would mint Kubernetes' own users", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.UsernamePrefix = ptr.To("system:") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.usernamePrefix"}},
		{name: "clientAuthentication with a secret nothing can carry", runtime: mainOIDC(func(o *infrav1.OIDCConfig) {
			o.ClientAuthentication = &gardencorev1beta1.OpenIDConnectClientAuthentication{Secret: ptr.To("hunter2")}
		}), want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.clientAuthentication"}},
		{name: "offline keys for the main provider", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.JWKS = []byte(tiny) }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.jwks"}},
		{name: "signing algorithm none", runtime: mainOIDC(func(o *infrav1.OIDCConfig) { o.SigningAlgs = []string{"none"} }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.oidcConfig.signingAlgs[0]"}},
		// Additional OIDC providers.
		{name: "additional issuer over plain http", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = ptr.To("http://other.example.com") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].issuerURL"}},
		{name: "additional groupsPrefix system: would grant system:masters", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.GroupsPrefix = ptr.To("system:") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].groupsPrefix"}},
		{name: "additional jwks that is no JSON object", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.JWKS = []byte("-----BEGIN PUBLIC KEY-----") }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig[0].jwks"}},
		{name: "additional provider without an issuer", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.IssuerURL = nil }),
			want: rejected{"spec.shoot.kubernetes.kubeAPIServer.additionalOidcConfig"}},
		// Shoot, labels, name and annotations.
		{name: "shoot name with -- Gardener refuses", runtime: shootName("h--dash"),
			want: rejected{"spec.shoot.name"}},
		{name: "shoot name in upper case", runtime: shootName("Hostile"),
			want: rejected{"spec.shoot.name"}},
		{name: "shoot name longer than Gardener allows", runtime: shootName("a-very-long-shoot-name"),
			want: rejected{"spec.shoot.name"}},
		{name: "shoot-name label that is not the shoot", runtime: func(rt *infrav1.Runtime) { rt.Labels[infrav1.LabelShootName] = g1.Spec.Shoot.Name },
			want: rejected{"metadata.labels[kyma-project.io/shoot-name]"}},
		{name: "runtime id with an underscore cannot name a Secret", runtime: label(infrav1.LabelRuntimeID, "rid_hostile"),
			want: rejected{"metadata.labels[kyma-project.io/runtime-id]"}},
		{name: "runtime id with dots and capitals", runtime: label(infrav1.LabelRuntimeID, "Rid.Hostile"),
			want: rejected{"metadata.labels[kyma-project.io/runtime-id]"}},
		{name: "required label missing", runtime: func(rt *infrav1.Runtime) { delete(rt.Labels, "kyma-project.io/instance-id") },
			want: rejected{"metadata.labels"}},
		{name: "required label empty", runtime: label("kyma-project.io/global-account-id", ""),
			want: rejected{"metadata.labels"}},
		{name: "Runtime name too long for a label value", runtime: func(rt *infrav1.Runtime) { rt.Name = strings.Repeat("h", 64) },
			want: rejected{"metadata.name"}},
		{name: "retry annotation that is no time", runtime: annotation(infrav1.RetryRequestedAtAnnotation, "now please"),
			want: rejected{"metadata.annotations[infrastructuremanager.kyma-project.io/retry-requested-at]"}},
		{name: "retry annotation in month 13", runtime: annotation(infrav1.RetryRequestedAtAnnotation, "2026-13-01T00:00:00Z"),
			want: rejected{"metadata.annotations[infrastructuremanager.kyma-project.io/retry-requested-at]"}},
		// Provider and networks.
		{name: "ACL entry that is no CIDR", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"0.0.0.0/0", "everyone"}}
		}, want: rejected{"spec.shoot.kubernetes.kubeAPIServer.acl.allowedCIDRs"}},
		{name: "worker minimum above maximum", runtime: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Provider.Workers[0].Minimum = 30 },
			want: rejected{"spec.shoot.provider.workers[0]"}},
		{name: "two worker pools of one name", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Provider.Workers = append(rt.Spec.Shoot.Provider.Workers, rt.Spec.Shoot.Provider.Workers[0])
		}, want: rejected{"spec.shoot.provider.workers"}},
		{name: "additional worker repeating a worker's name", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Provider.AdditionalWorkers = &[]infrav1.Worker{rt.Spec.Shoot.Provider.Workers[0]}
		}, want: rejected{"spec.shoot.provider.additionalWorkers"}},
		{name: "worker volume of size zero", runtime: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Provider.Workers[0].Volume.Size = "0" },
			want: rejected{"spec.shoot.provider.workers[0].volume.size"}},
		{name: "Kubernetes version latest", runtime: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = ptr.To("latest") },
			want: rejected{"spec.shoot.kubernetes.version"}},
		// Updates of an existing Runtime. Its runtime id is the first good runtime's, so it fails
		// before it writes anything and provisions no shoot of its own.
		{name: "moving a Runtime to another shoot", runtime: label(infrav1.LabelRuntimeID, g1ID), update: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Name, rt.Labels[infrav1.LabelShootName] = g1.Spec.Shoot.Name, g1.Spec.Shoot.Name
		}, want: rejected{"spec.shoot.name"}},
		{name: "retry annotation that is no time on an update", runtime: label(infrav1.LabelRuntimeID, g1ID),
			update: annotation(infrav1.RetryRequestedAtAnnotation, "yesterday"),
			want:   rejected{"metadata.annotations[infrastructuremanager.kyma-project.io/retry-requested-at]"}},

		// Admitted, and refused by the manager for good.
		{name: "shoot of another Runtime", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Name, rt.Labels[infrav1.LabelShootName] = g1.Spec.Shoot.Name, g1.Spec.Shoot.Name
		}, want: failed{reason: runtimectrl.ReasonShootNameTaken, names: g1.Spec.Shoot.Name}},
		{name: "runtime id of another Runtime", runtime: label(infrav1.LabelRuntimeID, g1ID),
			want: failed{reason: runtimectrl.ReasonRuntimeIDTaken, names: g1.Name}},
		{name: "jwks with an RSA key of 17 bits", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.JWKS = []byte(tiny) }),
			want: failed{reason: runtimectrl.ReasonInvalidJWKS, names: "additionalOidcConfig[0].jwks"}},
		{name: "jwks with a symmetric key", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.JWKS = []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`) }),
			want: failed{reason: runtimectrl.ReasonInvalidJWKS, names: "additionalOidcConfig[0].jwks"}},
		{name: "jwks whose key is no object", runtime: extraOIDC(func(o *infrav1.OIDCConfig) { o.JWKS = []byte(`{"keys":[42]}`) }),
			want: failed{reason: runtimectrl.ReasonInvalidJWKS, names: "additionalOidcConfig[0].jwks"}},
		{name: "AWS worker with an instance profile", runtime: workerConfig(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"WorkerConfig","iamInstanceProfile":{"name":"admin"}}`),
			want: failed{reason: gardener.ReasonInvalidRuntime, names: "iamInstanceProfile"}},
		{name: "AWS worker with optional IMDS tokens", runtime: workerConfig(`{"instanceMetadataOptions":{"httpTokens":"optional"}}`),
			want: failed{reason: gardener.ReasonInvalidRuntime, names: "instanceMetadataOptions.httpTokens"}},
		{name: "AWS worker with a hop limit pods can use", runtime: workerConfig(`{"instanceMetadataOptions":{"httpPutResponseHopLimit":64}}`),
			want: failed{reason: gardener.ReasonInvalidRuntime, names: "instanceMetadataOptions.httpPutResponseHopLimit"}},
		{name: "worker pool hosting the control plane", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Provider.Workers[0].ControlPlane = &gardencorev1beta1.WorkerControlPlane{}
		}, want: failed{reason: gardener.ReasonInvalidRuntime, names: "controlPlane"}},
		{name: "infrastructure in someone else's VPC", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.Shoot.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"id":"vpc-0123456789"}}}`)}
		}, want: failed{reason: gardener.ReasonInvalidRuntime, names: "networks.vpc.id"}},
		{name: "registry cache with the landscape's DNS credentials", runtime: registryCache("aws-route53-secret"),
			want: failed{reason: gardener.ReasonInvalidRuntime, names: "spec.imageRegistryCache[0].config.secretReferenceName"}},
		{name: "registry cache with the audit log credentials", runtime: registryCache(gardener.AuditLogCredentialsResource),
			want: failed{reason: gardener.ReasonInvalidRuntime, names: "spec.imageRegistryCache[0].config.secretReferenceName"}},
		{name: "registry cache pulling from the cloud's metadata service", runtime: func(rt *infrav1.Runtime) {
			rt.Spec.ImageRegistryCache = []infrav1.ImageRegistryCache{{Name: "docker", Namespace: "default", UID: "c0ffee",
				Config: infrav1.RegistryCacheConfigSpec{Upstream: "docker.io", RemoteURL: ptr.To("http://169.254.169.254")}}}
		}, want: rejected{"spec.imageRegistryCache[0].config.remoteURL"}},
		{name: "registry cache with credentials from the runtime cluster", runtime: registryCache("docker-hub-pull-secret"),
			want: failed{reason: gardener.ReasonInvalidRuntime, names: "spec.imageRegistryCache[0].config.secretReferenceName"}},
		// Ready runtimes changed behind the manager's back.
		{name: "shoot deleted out of band", runtime: func(*infrav1.Runtime) {}, afterReady: deleteShootOutOfBand,
			want: failed{reason: runtimectrl.ReasonShootMissing, also: assertShootRecreatedOnRetry}},
		{name: "kubeconfig with an exec plugin", runtime: func(*infrav1.Runtime) {}, afterReady: overwriteKubeconfig(execTrap, func(_ *clientcmdapi.Cluster, a *clientcmdapi.AuthInfo) {
			a.Token, a.Exec = "", &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh", Args: []string{"-c", "id > /tmp/hostile"}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		}), want: failed{reason: runtimectrl.ReasonKubeconfigRefused, also: execTrap.untouched}},
		{name: "kubeconfig with a token file", runtime: func(*infrav1.Runtime) {}, afterReady: overwriteKubeconfig(tokenTrap, func(_ *clientcmdapi.Cluster, a *clientcmdapi.AuthInfo) {
			a.Token, a.TokenFile = "", "/var/run/secrets/kubernetes.io/serviceaccount/token"
		}), want: failed{reason: runtimectrl.ReasonKubeconfigRefused, also: tokenTrap.untouched}},
		{name: "kubeconfig with client certificate files", runtime: func(*infrav1.Runtime) {}, afterReady: overwriteKubeconfig(fileTrap, func(_ *clientcmdapi.Cluster, a *clientcmdapi.AuthInfo) {
			a.Token, a.ClientCertificate, a.ClientKey = "", "/etc/kubernetes/pki/admin.crt", "/etc/kubernetes/pki/admin.key"
		}), want: failed{reason: runtimectrl.ReasonKubeconfigRefused, also: fileTrap.untouched}},
		{name: "kubeconfig skipping TLS verification", runtime: func(*infrav1.Runtime) {}, afterReady: overwriteKubeconfig(insecureTrap, func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) {
			c.CertificateAuthorityData, c.InsecureSkipTLSVerify = nil, true
		}), want: failed{reason: runtimectrl.ReasonKubeconfigRefused, also: insecureTrap.untouched}},
		{name: "kubeconfig with an http server", runtime: func(*infrav1.Runtime) {}, afterReady: overwriteKubeconfig(plainTrap, nil),
			want: failed{reason: runtimectrl.ReasonKubeconfigRefused, also: plainTrap.untouched}},

		// Admitted and handled.
		{name: "GardenerCluster of someone else for a good runtime's shoot", object: func() client.Object {
			return hostileCluster("gc-hostile-a", g1.Spec.Shoot.Name, nil)
		}, want: handled{check: waitsWithoutSecret}},
		{name: "GardenerCluster claiming a good Runtime by label", object: func() client.Object {
			return hostileCluster("gc-hostile-b", g1.Spec.Shoot.Name, map[string]string{runtimectrl.LabelRuntimeName: g1.Name})
		}, want: handled{check: waitsWithoutSecret}},
		{name: "GardenerCluster for a runtime id no Runtime has", object: func() client.Object {
			return hostileCluster("rid-nobody", "nobody", nil)
		}, want: handled{check: waitsWithoutSecret}},
		{name: "GardenerCluster writing into a good runtime's kubeconfig Secret", object: func() client.Object {
			gc := hostileCluster("gc-hostile-d", g1.Spec.Shoot.Name, map[string]string{infrav1.LabelRuntimeID: g1ID})
			gc.Spec.Kubeconfig.Secret.Name = "kubeconfig-" + g1ID
			return gc
		}, want: handled{check: waitsAndLeavesSecretTo(g1)}},
		{name: "GardenerCluster with extra labels for its Secret", runtime: func(*infrav1.Runtime) {}, afterReady: labelGardenerCluster,
			want: handled{check: secretWithoutExtraLabels}},
		{name: "kubeconfig Secret planted under a new runtime's name, labelled with its shoot", runtime: func(*infrav1.Runtime) {},
			plant: plantedKubeconfig(squatTrap), want: handled{check: plantIgnored(squatTrap)}},
		{name: "Runtime with a field the schema lacks", dryRun: true, object: func() client.Object {
			return withUnknownField(t, awsRuntime(t, "hx-unknown"))
		}, want: handled{check: unknownFieldDropped}},
		{name: "Runtime created claiming to be Ready", dryRun: true, object: func() client.Object {
			rt := awsRuntime(t, "hx-status")
			rt.Status.State, rt.Status.ProvisioningCompleted = infrav1.StateReady, true
			return rt
		}, want: handled{check: statusIgnored}},
	}

	// Write every manifest first, so the manager works on all of them at once; admission answers
	// at once.
	for i, hc := range cases {
		hc.write(t, i)
	}
	for _, hc := range cases {
		t.Run(hc.name, func(t *testing.T) { hc.verify(t) })
	}

	// Delete the hostile Runtimes, among them those naming the first good runtime's shoot and
	// runtime id, and wait until they are gone.
	var created []*infrav1.Runtime
	for _, hc := range cases {
		if hc.rt != nil && hc.rt.UID != "" {
			created = append(created, hc.rt)
			if err := client.IgnoreNotFound(env.Client.Delete(ctx, hc.rt)); err != nil {
				t.Errorf("delete %s: %v", hc.rt.Name, err)
			}
		}
	}
	for _, rt := range created {
		err := testenv.Eventually(ctx, 3*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rt), &infrav1.Runtime{})), nil
		})
		if err != nil {
			t.Errorf("hostile Runtime %s is not deleted: %v", rt.Name, err)
		}
	}

	for i, rt := range good {
		got := &infrav1.Runtime{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), got); err != nil || got.Status.State != infrav1.StateReady || readyReason(got) == "" {
			t.Errorf("good runtime %s: %v, state %s; want Ready", rt.Name, err, got.Status.State)
		}
		assertHeldBy(t, got, nil, nil)
		if after := snapshotGood(t, good)[i]; !reflect.DeepEqual(after, before[i]) {
			t.Errorf("good runtime %s was touched:\nbefore %+v\nafter  %+v", rt.Name, before[i], after)
		}
	}
	select {
	case <-managerDone:
		t.Error("the manager stopped")
	default:
	}
	if got := counterSum(t, "controller_runtime_reconcile_panics_total"); got != panicsBefore {
		t.Errorf("reconcile panics: %v, was %v before", got, panicsBefore)
	}
	kinds := map[string]int{}
	for _, hc := range cases {
		kinds[hc.want.kind()]++
	}
	t.Logf("%d hostile manifests: %v", len(cases), kinds)
}

// write creates the case's manifest (and applies its update), recording the API server's answer.
func (hc *hostileCase) write(t *testing.T, i int) {
	ctx := t.Context()
	if hc.runtime != nil {
		hc.rt = awsRuntime(t, fmt.Sprintf("hx-%02d", i))
		hc.runtime(hc.rt)
		hc.obj = hc.rt
		if hc.plant != nil {
			hc.planted = hc.plant(t, hc.rt)
			if err := env.Client.Create(ctx, hc.planted); err != nil {
				t.Fatalf("plant Secret %s: %v", hc.planted.Name, err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), hc.planted) })
		}
	} else {
		hc.obj = hc.object()
	}
	var opts []client.CreateOption
	if hc.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	hc.err = env.Client.Create(ctx, hc.obj, opts...)
	if hc.err == nil && !hc.dryRun {
		obj := hc.obj
		t.Cleanup(func() {
			if rt, ok := obj.(*infrav1.Runtime); ok {
				deleteRuntime(t, rt)
				return
			}
			_ = env.Client.Delete(context.Background(), obj)
		})
	}
	if hc.err != nil || hc.update == nil {
		return
	}
	// The manager writes the Runtime too: a conflict re-reads it and tries again.
	hc.err = clientretry.RetryOnConflict(clientretry.DefaultRetry, func() error {
		fresh := &infrav1.Runtime{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hc.rt), fresh); err != nil {
			return err
		}
		hc.update(fresh)
		return env.Client.Update(ctx, fresh)
	})
}

// verify asserts the case's expectation.
func (hc *hostileCase) verify(t *testing.T) {
	switch want := hc.want.(type) {
	case rejected:
		if hc.err == nil {
			t.Fatalf("admitted; want it rejected naming %s", want.field)
		}
		if !apierrors.IsInvalid(hc.err) && !apierrors.IsForbidden(hc.err) && !apierrors.IsBadRequest(hc.err) {
			t.Errorf("refused with %v, want an invalid request", hc.err)
		}
		if !strings.Contains(hc.err.Error(), want.field) {
			t.Errorf("the refusal does not name %s: %v", want.field, hc.err)
		}
		t.Logf("refused: %v", hc.err)
	case failed:
		if hc.err != nil {
			t.Fatalf("not admitted: %v", hc.err)
		}
		rt := hc.rt
		timeout := time.Minute
		if hc.afterReady != nil {
			hc.afterReady(t, waitForRuntime(t, rt, 3*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady }))
		}
		rt = waitForRuntime(t, rt, timeout, "Failed "+want.reason, func(rt *infrav1.Runtime) bool {
			return rt.Status.State == infrav1.StateFailed || (rt.Status.Retry != nil && rt.Status.Retry.Reason == want.reason)
		})
		r := rt.Status.Retry
		if rt.Status.State != infrav1.StateFailed || ((r == nil || r.Reason != want.reason) && readyReason(rt) != want.reason) {
			t.Errorf("state %s, Ready reason %s, retry record %+v; want Failed with reason %s", rt.Status.State, readyReason(rt), r, want.reason)
		}
		if want.names != "" && (r == nil || !strings.Contains(r.Message, want.names)) {
			t.Errorf("retry record %+v does not name %s", r, want.names)
		}
		if want.also != nil {
			want.also(t, rt)
		}
		if r != nil {
			t.Logf("failed: %s: %s", r.Reason, r.Message)
		}
	case handled:
		if hc.err != nil {
			t.Fatalf("not admitted: %v", hc.err)
		}
		if hc.afterReady != nil {
			hc.afterReady(t, waitForRuntime(t, hc.rt, 3*time.Minute, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady }))
		}
		want.check(t, hc)
	default:
		t.Fatalf("unknown expectation %T", hc.want)
	}
}

// goodState is what must not change in a good runtime: its shoot's version and generation and
// its authentication ConfigMap's data.
type goodState struct {
	ShootResourceVersion string
	ShootGeneration      int64
	AuthData             map[string]string
	AuthBinaryData       map[string][]byte
}

func snapshotGood(t *testing.T, rts []*infrav1.Runtime) []goodState {
	t.Helper()
	var out []goodState
	for _, rt := range rts {
		shoot := getShoot(t, rt.Spec.Shoot.Name)
		cm := &corev1.ConfigMap{}
		if err := garden.Get(t.Context(), client.ObjectKey{Namespace: shoot.Namespace, Name: gardener.AuthenticationConfigName(shoot.Name)}, cm); err != nil {
			t.Fatalf("authentication ConfigMap of %s: %v", rt.Name, err)
		}
		out = append(out, goodState{ShootResourceVersion: shoot.ResourceVersion, ShootGeneration: shoot.Generation, AuthData: cm.Data, AuthBinaryData: cm.BinaryData})
	}
	return out
}

// Mutations of the aws fixture.

func admins(names ...string) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) { rt.Spec.Security.Administrators = names }
}

func mainOIDC(edit func(*infrav1.OIDCConfig)) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) { edit(&rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig) }
}

func extraOIDC(edit func(*infrav1.OIDCConfig)) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) { edit(&(*rt.Spec.Shoot.Kubernetes.KubeAPIServer.AdditionalOidcConfig)[0]) }
}

func shootName(name string) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) { rt.Spec.Shoot.Name, rt.Labels[infrav1.LabelShootName] = name, name }
}

func label(key, value string) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) { rt.Labels[key] = value }
}

func annotation(key, value string) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) { metav1.SetMetaDataAnnotation(&rt.ObjectMeta, key, value) }
}

func workerConfig(raw string) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) {
		rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(raw)}
	}
}

func registryCache(secretReferenceName string) func(*infrav1.Runtime) {
	return func(rt *infrav1.Runtime) {
		rt.Spec.ImageRegistryCache = []infrav1.ImageRegistryCache{{Name: "docker", Namespace: "default", UID: "c0ffee",
			Config: infrav1.RegistryCacheConfigSpec{Upstream: "docker.io", SecretReferenceName: ptr.To(secretReferenceName)}}}
	}
}

// withUnknownField returns rt as an unstructured object with a field the schema lacks.
func withUnknownField(t *testing.T, rt *infrav1.Runtime) client.Object {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rt)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetGroupVersionKind(infrav1.GroupVersion.WithKind("Runtime"))
	if err := unstructured.SetNestedField(obj.Object, true, "spec", "shoot", "hostNetworkAdmin"); err != nil {
		t.Fatal(err)
	}
	return obj
}

// Out-of-band changes to Ready runtimes.

// deleteShootOutOfBand deletes rt's shoot in the garden, as someone other than the manager.
func deleteShootOutOfBand(t *testing.T, rt *infrav1.Runtime) {
	t.Helper()
	shoot := getShoot(t, rt.Spec.Shoot.Name)
	patch := client.MergeFrom(shoot.DeepCopy())
	metav1.SetMetaDataAnnotation(&shoot.ObjectMeta, runtimectrl.ConfirmDeletionAnnotation, "true")
	if err := garden.Patch(t.Context(), shoot, patch); err != nil {
		t.Fatal(err)
	}
	if err := garden.Delete(t.Context(), shoot); err != nil {
		t.Fatal(err)
	}
}

// assertShootRecreatedOnRetry checks that the shoot of rt, deleted out of band, is gone and was
// not created again while the Runtime is Failed; then a manual retry creates it, and the Runtime
// gets Ready again.
func assertShootRecreatedOnRetry(t *testing.T, rt *infrav1.Runtime) {
	t.Helper()
	key := client.ObjectKey{Namespace: gardensim.ProjectNamespace(project), Name: rt.Spec.Shoot.Name}
	assertGone(t, garden, key, &gardencorev1beta1.Shoot{})
	got := &infrav1.Runtime{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(rt), got); err != nil || got.Status.State != infrav1.StateFailed {
		t.Fatalf("%s after its shoot is gone: %v, state %s; want it still Failed", rt.Name, err, got.Status.State)
	}
	patch := client.MergeFrom(got.DeepCopy())
	metav1.SetMetaDataAnnotation(&got.ObjectMeta, infrav1.RetryRequestedAtAnnotation, time.Now().UTC().Format(time.RFC3339))
	if err := env.Client.Patch(t.Context(), got, patch); err != nil {
		t.Fatal(err)
	}
	waitForRuntime(t, got, 2*time.Minute, "Ready after a manual retry", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	if err := garden.Get(t.Context(), key, &gardencorev1beta1.Shoot{}); err != nil {
		t.Errorf("shoot after the manual retry: %v", err)
	}
}

// trap is a server a hostile kubeconfig names; it counts the requests that reach it.
type trap struct {
	srv  *httptest.Server
	hits atomic.Int32
}

func newTrap(t *testing.T, tls bool) *trap {
	tr := &trap{}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tr.hits.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	})
	if tls {
		tr.srv = httptest.NewTLSServer(h)
	} else {
		tr.srv = httptest.NewServer(h)
	}
	t.Cleanup(tr.srv.Close)
	return tr
}

// untouched checks that no request reached the trap.
func (tr *trap) untouched(t *testing.T, _ *infrav1.Runtime) {
	t.Helper()
	if n := tr.hits.Load(); n != 0 {
		t.Errorf("%d requests reached %s, which a refused kubeconfig names", n, tr.srv.URL)
	}
}

// kubeconfigFor returns a kubeconfig with inline credentials for the trap's server, edited by
// edit.
func kubeconfigFor(t *testing.T, tr *trap, edit func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: tr.srv.URL}
	if tr.srv.TLS != nil {
		cluster.CertificateAuthorityData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tr.srv.Certificate().Raw})
	}
	auth := &clientcmdapi.AuthInfo{Token: "stolen"}
	if edit != nil {
		edit(cluster, auth)
	}
	cfg.Clusters["hostile"], cfg.AuthInfos["hostile"] = cluster, auth
	cfg.Contexts["hostile"] = &clientcmdapi.Context{Cluster: "hostile", AuthInfo: "hostile"}
	cfg.CurrentContext = "hostile"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// overwriteKubeconfig replaces the kubeconfig in rt's Secret, keeping its labels and
// annotations, by one for the trap's server edited by edit, and asks for a manual retry.
func overwriteKubeconfig(tr *trap, edit func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) func(*testing.T, *infrav1.Runtime) {
	return func(t *testing.T, rt *infrav1.Runtime) {
		t.Helper()
		data := kubeconfigFor(t, tr, edit)
		key := client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]}
		secret := readSecret(t, key)
		// The kubeconfig is rotated about 6s after it was issued here (managerOptions); a
		// rotation right after the overwrite would hide it from the manager, so a kubeconfig
		// close to its rotation is overwritten after that rotation.
		if issued, err := time.Parse(time.RFC3339, secret.Annotations[gardenercluster.AnnotationIssuedAt]); err != nil || time.Since(issued) > 3*time.Second {
			secret = waitForSecret(t, key, "a rotation", func(s *corev1.Secret) bool {
				return s.Annotations[gardenercluster.AnnotationIssuedAt] != secret.Annotations[gardenercluster.AnnotationIssuedAt]
			})
		}
		secret.Data[runtimectrl.KubeconfigKey] = data
		if err := env.Client.Update(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(rt.DeepCopy())
		metav1.SetMetaDataAnnotation(&rt.ObjectMeta, infrav1.RetryRequestedAtAnnotation, time.Now().UTC().Format(time.RFC3339))
		if err := env.Client.Patch(t.Context(), rt, patch); err != nil {
			t.Fatal(err)
		}
	}
}

// labelGardenerCluster labels rt's GardenerCluster with labels of someone else and asks for a
// new kubeconfig.
func labelGardenerCluster(t *testing.T, rt *infrav1.Runtime) {
	t.Helper()
	gc := &infrav1.GardenerCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: rt.Namespace, Name: rt.Labels[infrav1.LabelRuntimeID]}, gc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(gc.DeepCopy())
	gc.Labels["hostile.example.com/exfiltrate"] = "true"
	gc.Labels[infrav1.LabelKymaInternal] = "false"
	metav1.SetMetaDataAnnotation(&gc.ObjectMeta, infrav1.AnnotationForceKubeconfigRotation, "true")
	if err := env.Client.Patch(t.Context(), gc, patch); err != nil {
		t.Fatal(err)
	}
}

// hostileCluster is a GardenerCluster someone other than the manager creates.
func hostileCluster(name, shoot string, labels map[string]string) *infrav1.GardenerCluster {
	return &infrav1.GardenerCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: name, Labels: labels},
		Spec: infrav1.GardenerClusterSpec{
			Shoot: infrav1.Shoot{Name: shoot},
			Kubeconfig: infrav1.Kubeconfig{Secret: infrav1.SecretKeyRef{
				Namespace: "kcp-system", Name: "kubeconfig-" + name, Key: runtimectrl.KubeconfigKey}},
		},
	}
}

// Checks of handled cases.

// waitForUnheld waits until the GardenerCluster says no Runtime holds it.
func waitForUnheld(t *testing.T, hc *hostileCase) *infrav1.GardenerCluster {
	t.Helper()
	gc := &infrav1.GardenerCluster{}
	var status []byte
	err := testenv.Eventually(t.Context(), time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hc.obj), gc); err != nil {
			return false, err
		}
		status, _ = json.Marshal(gc.Status)
		return strings.Contains(string(status), "No Runtime holds this GardenerCluster"), nil
	})
	if err != nil {
		t.Fatalf("GardenerCluster %s does not say no Runtime holds it: %v; status %s", gc.Name, err, status)
	}
	if gc.Status.State == infrav1.StateReady {
		t.Errorf("GardenerCluster %s nobody holds is Ready", gc.Name)
	}
	return gc
}

// waitsWithoutSecret: the GardenerCluster waits for a Runtime to hold it and its Secret is not
// written.
func waitsWithoutSecret(t *testing.T, hc *hostileCase) {
	gc := waitForUnheld(t, hc)
	ref := gc.Spec.Kubeconfig.Secret
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("Secret %s/%s of a GardenerCluster nobody holds: %v, want NotFound", ref.Namespace, ref.Name, err)
	}
}

// waitsAndLeavesSecretTo: the GardenerCluster, naming rt's kubeconfig Secret, waits, and the
// Secret stays rt's.
func waitsAndLeavesSecretTo(rt *infrav1.Runtime) func(*testing.T, *hostileCase) {
	return func(t *testing.T, hc *hostileCase) {
		waitForUnheld(t, hc)
		s := readSecret(t, client.ObjectKey{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID]})
		if s.Labels[infrav1.LabelClusterName] != rt.Labels[infrav1.LabelRuntimeID] || s.Labels[runtimectrl.LabelRuntimeName] != rt.Name {
			t.Errorf("kubeconfig Secret of %s has labels %v: it changed hands", rt.Name, s.Labels)
		}
	}
}

// secretWithoutExtraLabels: after a new kubeconfig is written, the Secret has none of the
// labels added to the GardenerCluster.
func secretWithoutExtraLabels(t *testing.T, hc *hostileCase) {
	key := client.ObjectKey{Namespace: hc.rt.Namespace, Name: "kubeconfig-" + hc.rt.Labels[infrav1.LabelRuntimeID]}
	was := readSecret(t, key)
	s := waitForSecret(t, key, "a new kubeconfig", func(s *corev1.Secret) bool {
		return s.Annotations[gardenercluster.AnnotationIssuedAt] != was.Annotations[gardenercluster.AnnotationIssuedAt]
	})
	if _, ok := s.Labels["hostile.example.com/exfiltrate"]; ok || s.Labels[infrav1.LabelKymaInternal] != "true" {
		t.Errorf("kubeconfig Secret labels %v: the GardenerCluster's labels reached it", s.Labels)
	}
}

// unknownFieldDropped: a field the schema lacks is refused by name or pruned.
func unknownFieldDropped(t *testing.T, hc *hostileCase) {
	u, ok := hc.obj.(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("%T", hc.obj)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "shoot", "hostNetworkAdmin"); found {
		t.Errorf("the API server would store spec.shoot.hostNetworkAdmin: %v", u.Object["spec"])
	}
	if u.GetUID() == "" || u.GetName() != "hx-unknown" {
		t.Errorf("dry run answered %s/%s uid %q", u.GetNamespace(), u.GetName(), u.GetUID())
	}
}

// statusIgnored: status written on create does not reach the stored object.
func statusIgnored(t *testing.T, hc *hostileCase) {
	rt, ok := hc.obj.(*infrav1.Runtime)
	if !ok {
		t.Fatalf("%T", hc.obj)
	}
	if rt.Status.State != "" || rt.Status.ProvisioningCompleted {
		t.Errorf("the API server would store the status the creator wrote: %+v", rt.Status)
	}
}

// plantedKubeconfig returns a Secret someone else creates under the name of rt's kubeconfig
// Secret before rt exists: no label of the manager, but rt's shoot-name label, and a kubeconfig
// with inline credentials for the trap's server.
func plantedKubeconfig(tr *trap) func(*testing.T, *infrav1.Runtime) *corev1.Secret {
	return func(t *testing.T, rt *infrav1.Runtime) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: rt.Namespace, Name: "kubeconfig-" + rt.Labels[infrav1.LabelRuntimeID],
				Labels: map[string]string{infrav1.LabelShootName: rt.Spec.Shoot.Name}},
			Data: map[string][]byte{runtimectrl.KubeconfigKey: kubeconfigFor(t, tr, nil)},
		}
	}
}

// plantIgnored: the planted Secret is not the manager's, so its GardenerCluster fails without
// writing it, the runtime never reaches the planted server and is not Ready on it, and the
// Secret stays as planted.
func plantIgnored(tr *trap) func(*testing.T, *hostileCase) {
	return func(t *testing.T, hc *hostileCase) {
		gc := &infrav1.GardenerCluster{}
		key := client.ObjectKey{Namespace: hc.rt.Namespace, Name: hc.rt.Labels[infrav1.LabelRuntimeID]}
		err := testenv.Eventually(t.Context(), 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, key, gc); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return gc.Status.State == infrav1.StateFailed || gc.Status.State == infrav1.StateReady, nil
		})
		if err != nil {
			t.Fatalf("GardenerCluster %s: %v; status %+v", key.Name, err, gc.Status)
		}
		if r := gc.Status.Retry; gc.Status.State != infrav1.StateFailed || r == nil || r.Reason != gardenercluster.ReasonSecretNotOwned {
			t.Errorf("GardenerCluster %s: state %s, retry record %+v; want Failed with %s", key.Name, gc.Status.State, r, gardenercluster.ReasonSecretNotOwned)
		}
		rt := waitForRuntime(t, hc.rt, 3*time.Minute, "Failed or Ready", func(rt *infrav1.Runtime) bool {
			return rt.Status.State == infrav1.StateFailed || rt.Status.State == infrav1.StateReady
		})
		if rt.Status.State == infrav1.StateReady {
			t.Errorf("%s is Ready on a kubeconfig the manager did not write", rt.Name)
		}
		t.Logf("runtime %s: state %s, retry record %+v", rt.Name, rt.Status.State, rt.Status.Retry)
		tr.untouched(t, rt)
		s := readSecret(t, client.ObjectKeyFromObject(hc.planted))
		if s.ResourceVersion != hc.planted.ResourceVersion || !reflect.DeepEqual(s.Data, hc.planted.Data) || !reflect.DeepEqual(s.Labels, hc.planted.Labels) {
			t.Errorf("the planted Secret was written: labels %v", s.Labels)
		}
	}
}
