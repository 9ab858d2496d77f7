package gardenercluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// The tests run the step against an in-memory store of the cluster the GardenerClusters live
// in, a stand-in for Gardener's adminkubeconfig sub-resource and a fake clock.

const (
	namespace = "kcp-system"
	lifetime  = 24 * time.Hour
)

var t0 = time.Date(2040, 3, 14, 12, 0, 0, 0, time.UTC)

// issuer stands in for Gardener: it issues numbered kubeconfigs, or fails with err; its shoots
// have the uids in uids, uid-<name> when not listed, and "" is a shoot that does not exist.
type issuer struct {
	clock  *clocktesting.FakeClock
	issued int
	err    error
	uids   map[string]types.UID
	// unaddressed makes every shoot advertise no API server address, as one being created.
	unaddressed bool
}

func (i *issuer) Shoot(_ context.Context, shoot string) (ShootState, error) {
	uid, ok := i.uids[shoot]
	if !ok {
		return ShootState{UID: types.UID("uid-" + shoot), Addressed: !i.unaddressed}, nil
	}
	if uid == "" {
		return ShootState{}, apierrors.NewNotFound(schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}, shoot)
	}
	return ShootState{UID: uid, Addressed: !i.unaddressed}, nil
}

func (i *issuer) AdminKubeconfig(_ context.Context, shoot string, lifetime time.Duration) ([]byte, time.Time, error) {
	if i.err != nil {
		return nil, time.Time{}, i.err
	}
	i.issued++
	return []byte(shoot + " kubeconfig " + string(rune('0'+i.issued))), i.clock.Now().Add(lifetime), nil
}

// bench is one GardenerCluster's world.
type bench struct {
	kcp    client.Client
	clock  *clocktesting.FakeClock
	issuer *issuer
	k      kubeconfigs
}

func newBench(t *testing.T, objs ...client.Object) *bench {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	b := &bench{clock: clocktesting.NewFakeClock(t0)}
	b.kcp = fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&infrav1.GardenerCluster{}).Build()
	b.issuer = &issuer{clock: b.clock}
	cfg := Config{Options: Options{KubeconfigLifetime: lifetime, KubeconfigRotateAfter: 0.5}, Client: b.kcp, Kubeconfigs: b.issuer, Clock: b.clock}
	b.k = kubeconfigs{cfg}
	return b
}

// testCluster is the GardenerCluster of runtime id rid-1, for shoot c-1.
func testCluster() *infrav1.GardenerCluster {
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = "rid-1", namespace
	gc.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1", infrav1.LabelKymaName: "kyma-1", "team": "someone's"}
	gc.Spec.Shoot.Name = "c-1"
	gc.Spec.Kubeconfig.Secret = infrav1.SecretKeyRef{Name: "kubeconfig-rid-1", Namespace: namespace, Key: "config"}
	return gc
}

// testRuntime is the Runtime that holds testCluster.
func testRuntime() *infrav1.Runtime {
	rt := &infrav1.Runtime{}
	rt.Name, rt.Namespace = "rt-1", namespace
	rt.Labels = map[string]string{infrav1.LabelRuntimeID: "rid-1", infrav1.LabelKymaName: "kyma-1", infrav1.LabelGlobalAccountID: "ga-1"}
	rt.Spec.Shoot.Name = "c-1"
	return rt
}

// storedSecret is the kubeconfig Secret the manager wrote for testCluster at issued, for the
// shoot c-1 the issuer has.
func storedSecret(issued time.Time, kubeconfig string) *corev1.Secret {
	s := &corev1.Secret{Data: map[string][]byte{"config": []byte(kubeconfig)}}
	s.Name, s.Namespace = "kubeconfig-rid-1", namespace
	s.Labels = map[string]string{infrav1.LabelKymaManagedBy: ManagedBy, infrav1.LabelClusterName: "rid-1"}
	s.Annotations = map[string]string{
		AnnotationIssuedAt:  issued.UTC().Format(time.RFC3339),
		AnnotationExpiresAt: issued.Add(lifetime).UTC().Format(time.RFC3339),
		AnnotationShoot:     "c-1",
		AnnotationShootUID:  "uid-c-1",
	}
	return s
}

// upstreamSecret is the kubeconfig Secret upstream's manager wrote for testCluster at synced:
// the GardenerCluster's labels, managed-by and cluster-name, and only the last-sync annotation.
func upstreamSecret(synced time.Time, kubeconfig string) *corev1.Secret {
	s := &corev1.Secret{Data: map[string][]byte{"config": []byte(kubeconfig)}}
	s.Name, s.Namespace = "kubeconfig-rid-1", namespace
	s.Labels = map[string]string{
		infrav1.LabelRuntimeID: "rid-1", infrav1.LabelKymaName: "kyma-1", infrav1.LabelShootName: "c-1",
		infrav1.LabelKymaManagedBy: ManagedBy, infrav1.LabelClusterName: "rid-1",
	}
	s.Annotations = map[string]string{infrav1.AnnotationLastSync: synced.UTC().Format(time.RFC3339)}
	return s
}

// TestEnsureKubeconfig covers when the step fetches a kubeconfig, what it stores, and what it
// refuses to touch.
func TestEnsureKubeconfig(t *testing.T) {
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// cluster changes the GardenerCluster; secret is in the store when not nil.
		cluster func(*infrav1.GardenerCluster)
		secret  *corev1.Secret
		// runtime changes the Runtime that holds the GardenerCluster; noRuntime leaves it out.
		runtime   func(*infrav1.Runtime)
		noRuntime bool
		// uids are the issuer's shoot uids (see issuer); unaddressed makes its shoots advertise
		// no API server address.
		uids        map[string]types.UID
		unaddressed bool
		// after moves the clock before the step runs.
		after time.Duration
		// gardener fails every request when set.
		gardener error
		want     fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// issued is how many kubeconfigs Gardener issued; kubeconfig is what the Secret holds
		// afterwards ("" when there is no Secret).
		issued     int
		kubeconfig string
	}{
		{
			name:   "no Secret: fetches one and stores it",
			reason: "a new GardenerCluster gets its first kubeconfig, and the next check at its rotation point",
			want:   fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "a fresh kubeconfig is kept until its rotation point",
			reason: "Gardener is not asked for kubeconfigs that are not due",
			secret: storedSecret(t0.Add(-2*time.Hour), "old"),
			want:   fsmtest.DoneUntil(10 * time.Hour), kubeconfig: "old",
		},
		{
			name:   "past the rotation point it is rotated",
			reason: "a kubeconfig is replaced well before it expires",
			secret: storedSecret(t0.Add(-2*time.Hour), "old"), after: 11 * time.Hour,
			want: fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "a forced rotation rotates a fresh kubeconfig",
			reason: "the rotation annotation is how an operator revokes a leaked kubeconfig",
			cluster: func(gc *infrav1.GardenerCluster) {
				gc.Annotations = map[string]string{infrav1.AnnotationForceKubeconfigRotation: "true"}
			},
			secret: storedSecret(t0.Add(-time.Minute), "old"),
			want:   fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "a kubeconfig of unknown age is rotated",
			reason: "a kubeconfig that may be expired is replaced",
			secret: func() *corev1.Secret {
				s := storedSecret(t0, "old")
				s.Annotations[AnnotationIssuedAt] = "yesterday"
				return s
			}(),
			want: fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "a failed rotation keeps the stored kubeconfig",
			reason: "a working kubeconfig is kept while Gardener is down, and the failure keeps the class Gardener's client gave it",
			secret: storedSecret(t0.Add(-2*time.Hour), "old"), after: 11 * time.Hour,
			gardener: retry.Transient("Unavailable", errors.New("gardener is down")),
			want:     fsmtest.Transient("Unavailable"), kubeconfig: "old",
		},
		{
			name:      "a GardenerCluster no Runtime holds waits and gets no kubeconfig",
			reason:    "credentials are issued only for a Runtime; the message says which Runtime is missing",
			noRuntime: true,
			want:      fsmtest.Wait(5 * time.Minute),
			says:      "No Runtime holds this GardenerCluster (no Runtime of runtime id rid-1 names shoot c-1)",
		},
		{
			name:    "a Runtime named after its runtime id, as the broker names them, holds its GardenerCluster",
			reason:  "the Runtime of the GardenerCluster's name is read by name, without reading the namespace's Runtimes",
			runtime: func(rt *infrav1.Runtime) { rt.Name = "rid-1" },
			want:    fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:    "a Runtime named after the runtime id that names another shoot does not hold the GardenerCluster",
			reason:  "the name alone does not make the holder, as the runtime id alone does not",
			runtime: func(rt *infrav1.Runtime) { rt.Name, rt.Spec.Shoot.Name = "rid-1", "c-2" },
			want:    fsmtest.Wait(5 * time.Minute),
			says:    "No Runtime holds this GardenerCluster (no Runtime of runtime id rid-1 names shoot c-1)",
		},
		{
			name:    "a GardenerCluster for a shoot its Runtime does not name waits",
			reason:  "a Runtime's id alone does not give it another shoot's kubeconfig; the message names the shoot",
			runtime: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Name = "c-2" },
			want:    fsmtest.Wait(5 * time.Minute),
			says:    "No Runtime holds this GardenerCluster (no Runtime of runtime id rid-1 names shoot c-1)",
		},
		{
			name:    "a GardenerCluster labelled for a Runtime of another runtime id waits",
			reason:  "the label alone does not make a Runtime the holder; the message names both ids",
			cluster: func(gc *infrav1.GardenerCluster) { gc.Labels[infrav1.LabelRuntimeName] = "rt-1" },
			runtime: func(rt *infrav1.Runtime) { rt.Labels[infrav1.LabelRuntimeID] = "rid-2" },
			want:    fsmtest.Wait(5 * time.Minute),
			says:    "No Runtime holds this GardenerCluster (Runtime rt-1 has runtime id rid-2, not rid-1)",
		},
		{
			name:    "a GardenerCluster whose Secret is not the runtime id's waits",
			reason:  "a kubeconfig must not be written to a Secret of someone's choosing; the message names both Secrets",
			cluster: func(gc *infrav1.GardenerCluster) { gc.Spec.Kubeconfig.Secret.Name = "elsewhere" },
			want:    fsmtest.Wait(5 * time.Minute),
			says:    "No Runtime holds this GardenerCluster (the Secret is elsewhere, not kubeconfig-rid-1)",
		},
		{
			name:   "a shoot that does not exist gets no kubeconfig, and the stored one stays",
			reason: "a shoot may be gone for a moment while it is re-created; the message names the shoot",
			uids:   map[string]types.UID{"c-1": ""}, secret: storedSecret(t0.Add(-2*time.Hour), "old"),
			want: fsmtest.Wait(5 * time.Minute), kubeconfig: "old",
			says: "Shoot c-1 does not exist",
		},
		{
			name:   "a shoot created again under its name waits for its API server address, and the stored kubeconfig stays",
			reason: "a kubeconfig without an address is useless; the message says what is awaited",
			secret: storedSecret(t0.Add(-2*time.Hour), "earlier shoot's"),
			uids:   map[string]types.UID{"c-1": "uid-recreated"}, unaddressed: true,
			want: fsmtest.Wait(30 * time.Second), kubeconfig: "earlier shoot's",
			says: "Shoot c-1 advertises no API server address yet",
		},
		{
			name:   "a kubeconfig issued for another shoot is rotated at once",
			reason: "a kubeconfig of another shoot reaches the wrong cluster",
			secret: func() *corev1.Secret {
				s := storedSecret(t0.Add(-2*time.Hour), "other shoot's")
				s.Annotations[AnnotationShoot] = "c-0"
				return s
			}(),
			want: fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "a kubeconfig of an earlier shoot of the same name is rotated at once",
			reason: "a re-created shoot has a new API server and new credentials",
			secret: storedSecret(t0.Add(-2*time.Hour), "earlier shoot's"),
			uids:   map[string]types.UID{"c-1": "uid-recreated"},
			want:   fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "upstream's fresh kubeconfig, bound by its shoot-name label, is kept",
			reason: "an adoption must not rotate every kubeconfig at once",
			secret: func() *corev1.Secret {
				s := storedSecret(t0.Add(-2*time.Hour), "upstream's")
				delete(s.Annotations, AnnotationShoot)
				delete(s.Annotations, AnnotationShootUID)
				s.Labels[infrav1.LabelShootName] = "c-1"
				return s
			}(),
			want: fsmtest.DoneUntil(10 * time.Hour), kubeconfig: "upstream's",
		},
		{
			name:   "upstream's kubeconfig is kept until upstream would rotate it: 95% of its rotation period after its last sync",
			reason: "upstream's Secrets have no issue time, only the last sync",
			secret: upstreamSecret(t0.Add(-2*time.Hour), "upstream's"),
			want:   fsmtest.DoneUntil(9*time.Hour + 24*time.Minute), kubeconfig: "upstream's",
		},
		{
			name:   "upstream's kubeconfig due by its last sync is rotated",
			reason: "upstream's kubeconfigs are rotated on upstream's schedule",
			secret: upstreamSecret(t0.Add(-2*time.Hour), "upstream's"), after: 9*time.Hour + 24*time.Minute,
			want: fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "upstream's kubeconfig without a readable last sync is of unknown age, and rotated",
			reason: "a kubeconfig that may be expired is replaced",
			secret: func() *corev1.Secret {
				s := upstreamSecret(t0, "upstream's")
				s.Annotations[infrav1.AnnotationLastSync] = "yesterday"
				return s
			}(),
			want: fsmtest.DoneUntil(12 * time.Hour), issued: 1, kubeconfig: "c-1 kubeconfig 1",
		},
		{
			name:   "a Secret outside the GardenerCluster's namespace is refused",
			reason: "a GardenerCluster must not make the manager write admin credentials into another namespace",
			cluster: func(gc *infrav1.GardenerCluster) {
				gc.Spec.Kubeconfig.Secret.Namespace = "kube-system"
			},
			want: fsmtest.Terminal(ReasonSecretOutsideNamespace),
		},
		{
			name:   "a Secret the manager did not create is refused",
			reason: "someone else's Secret is neither overwritten nor trusted",
			secret: func() *corev1.Secret {
				s := storedSecret(t0, "someone else's")
				s.Labels = map[string]string{"app": "other"}
				return s
			}(),
			want: fsmtest.Terminal(ReasonSecretNotOwned), kubeconfig: "someone else's",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			gc := testCluster()
			if tt.cluster != nil {
				tt.cluster(gc)
			}
			objs := []client.Object{gc}
			if tt.secret != nil {
				objs = append(objs, tt.secret)
			}
			if !tt.noRuntime {
				rt := testRuntime()
				if tt.runtime != nil {
					tt.runtime(rt)
				}
				objs = append(objs, rt)
			}
			b := newBench(t, objs...)
			b.issuer.err, b.issuer.uids, b.issuer.unaddressed = tt.gardener, tt.uids, tt.unaddressed
			b.clock.Step(tt.after)
			if err := b.kcp.Get(t.Context(), client.ObjectKeyFromObject(gc), gc); err != nil {
				t.Fatal(err)
			}

			out := b.k.ensure(t.Context(), gc)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			if b.issuer.issued != tt.issued {
				t.Errorf("Gardener issued %d kubeconfigs, want %d", b.issuer.issued, tt.issued)
			}
			secret := &corev1.Secret{}
			err := b.kcp.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "kubeconfig-rid-1"}, secret)
			if got := string(secret.Data["config"]); (err == nil) != (tt.kubeconfig != "") || got != tt.kubeconfig {
				t.Errorf("Secret holds %q (%v), want %q", got, err, tt.kubeconfig)
			}
			if tt.issued == 0 {
				return
			}
			// A new kubeconfig is stored with its age and shoot, under upstream's labels taken
			// from the Runtime: none the GardenerCluster adds of its own.
			if secret.Labels[infrav1.LabelKymaName] != "kyma-1" || secret.Labels[infrav1.LabelGlobalAccountID] != "ga-1" || !OwnsSecret(secret, gc.Name) {
				t.Errorf("Secret labels %v: not the Runtime's, or not the manager's", secret.Labels)
			}
			if _, ok := secret.Labels["team"]; ok {
				t.Errorf("Secret labels %v: the GardenerCluster's own label team reached the Secret", secret.Labels)
			}
			if secret.Annotations[AnnotationShoot] != "c-1" || secret.Annotations[AnnotationShootUID] == "" {
				t.Errorf("Secret annotations %v, want the shoot c-1 and its uid", secret.Annotations)
			}
			now := b.clock.Now().UTC().Format(time.RFC3339)
			if secret.Annotations[AnnotationIssuedAt] != now || secret.Annotations[AnnotationExpiresAt] != b.clock.Now().Add(lifetime).UTC().Format(time.RFC3339) {
				t.Errorf("Secret annotations %v, want issued now (%s) for %s", secret.Annotations, now, lifetime)
			}
			if gc.Status.KubeconfigRotatedAt == nil || !gc.Status.KubeconfigRotatedAt.Time.Equal(b.clock.Now()) {
				t.Errorf("status rotatedAt %v, want now", gc.Status.KubeconfigRotatedAt)
			}
			stored := &infrav1.GardenerCluster{}
			if err := b.kcp.Get(t.Context(), client.ObjectKeyFromObject(gc), stored); err != nil {
				t.Fatal(err)
			}
			if _, forced := stored.Annotations[infrav1.AnnotationForceKubeconfigRotation]; forced {
				t.Error("the forced rotation's annotation stayed after the rotation")
			}
		})
	}
}

// TestKubeconfigRotatesOnTime runs the machine under the engine on the fake clock for three
// lifetimes: the kubeconfig is rotated at each rotation point, never expires, and a rotation
// that fails is retried while the stored kubeconfig stays.
func TestKubeconfigRotatesOnTime(t *testing.T) {
	b := newBench(t, testCluster(), testRuntime())
	cfg := b.k.Config
	cfg.Retry = retry.Policy{Initial: time.Minute, Factor: 2, Cap: 30 * time.Minute, MaxAttempts: 10}
	// Setup re-checks a GardenerCluster hourly.
	engine, err := fsm.New(NewMachine(cfg), fsm.WithClock(b.clock), fsm.WithRand(func() float64 { return 0.5 }), fsm.WithResync(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	r := fsm.NewReconciler(b.kcp, engine, func() *infrav1.GardenerCluster { return &infrav1.GardenerCluster{} })
	key := client.ObjectKeyFromObject(testCluster())
	secret := &corev1.Secret{}
	for b.clock.Now().Before(t0.Add(3 * lifetime)) {
		// Gardener is down for two hours of the second lifetime.
		down := b.clock.Now().After(t0.Add(lifetime+11*time.Hour)) && b.clock.Now().Before(t0.Add(lifetime+13*time.Hour))
		b.issuer.err = nil
		if down {
			b.issuer.err = retry.Transient("Unavailable", errors.New("gardener is down"))
		}
		res, err := r.Reconcile(t.Context(), reconcileRequest(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.kcp.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "kubeconfig-rid-1"}, secret); err != nil {
			t.Fatalf("at %s: %v", b.clock.Now().Sub(t0), err)
		}
		expires, err := time.Parse(time.RFC3339, secret.Annotations[AnnotationExpiresAt])
		if err != nil || !b.clock.Now().Before(expires) {
			t.Fatalf("at %s the stored kubeconfig expired (%s, %v)", b.clock.Now().Sub(t0), expires, err)
		}
		if res.RequeueAfter <= 0 {
			t.Fatalf("at %s: no next check: %+v", b.clock.Now().Sub(t0), res)
		}
		b.clock.Step(res.RequeueAfter)
	}
	// Rotations at 0, 12h, 24h, 36h (late: Gardener was down), 48h or so, 60h.
	if b.issuer.issued < 6 || b.issuer.issued > 7 {
		t.Errorf("Gardener issued %d kubeconfigs in three lifetimes, want one per half lifetime (6 or 7)", b.issuer.issued)
	}
}

func reconcileRequest(key client.ObjectKey) reconcile.Request {
	return reconcile.Request{NamespacedName: key}
}
