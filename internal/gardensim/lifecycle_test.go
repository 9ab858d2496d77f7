package gardensim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lifecycleShoot is the shoot of TestShootLifecycle.
const lifecycleShoot = "lifecycle"

// TestShootLifecycle drives one shoot through create, a spec change and a
// confirmed deletion with the manager's kind of client, and watches the
// operations play out.
func TestShootLifecycle(t *testing.T) {
	seen := watchOperations(t, lifecycleShoot)

	shoot := newShoot(lifecycleShoot)
	if err := garden.Create(t.Context(), shoot); err != nil {
		t.Fatalf("create shoot: %v", err)
	}
	t.Cleanup(func() { confirmAndDelete(t, lifecycleShoot) })

	t.Run("create succeeds with the status of a real shoot", func(t *testing.T) { checkCreated(t, shoot) })
	t.Run("a spec change applied server-side triggers a Reconcile", func(t *testing.T) { checkSpecChangeReconciles(t, shoot) })
	t.Run("the admin kubeconfig reaches the shoot cluster", func(t *testing.T) { checkAdminKubeconfig(t, shoot) })
	t.Run("deletion without confirmation is forbidden", func(t *testing.T) { checkDeletionNeedsConfirmation(t, shoot) })
	t.Run("confirmed deletion runs a Delete and the shoot disappears", func(t *testing.T) { checkConfirmedDeletion(t, shoot) })

	want := []string{"Create/Processing", "Create/Succeeded", "Reconcile/Processing", "Reconcile/Succeeded", "Delete/Processing", "Delete/Succeeded"}
	if got := seen(); !containsInOrder(got, want) {
		t.Errorf("watched operations %v, want %v in this order", got, want)
	}
}

// checkCreated checks that create succeeds with the status of a real shoot.
func checkCreated(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	got := &gardencorev1beta1.Shoot{}
	eventually(t, 60*time.Second, "create", func(ctx context.Context) (bool, error) {
		err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), got)
		last := got.Status.LastOperation
		return err == nil && last != nil && last.State == gardencorev1beta1.LastOperationStateSucceeded, err
	})
	checkReadyStatus(t, got, gardencorev1beta1.LastOperationTypeCreate)
	if got.Status.TechnicalID != "shoot--test--lifecycle" {
		t.Errorf("technicalID = %q", got.Status.TechnicalID)
	}
	if got.Status.UID != got.UID {
		t.Errorf("status.uid = %q, want %q", got.Status.UID, got.UID)
	}
	if !hasFinalizerGardener(got) {
		t.Errorf("finalizers = %v, want gardener", got.Finalizers)
	}
	info, ok := sim.ShootCluster(got)
	if !ok {
		t.Fatal("no shoot cluster runs")
	}
	t.Logf("dedicated shoot cluster started in %v; simulator started in %v", info.StartedIn.Round(time.Millisecond), startedIn.Round(time.Millisecond))
}

// checkSpecChangeReconciles checks that a spec change applied server-side triggers a Reconcile.
func checkSpecChangeReconciles(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	before := &gardencorev1beta1.Shoot{}
	if err := garden.Get(t.Context(), client.ObjectKeyFromObject(shoot), before); err != nil {
		t.Fatal(err)
	}
	apply := &unstructured.Unstructured{}
	apply.SetAPIVersion(gardencorev1beta1.SchemeGroupVersion.String())
	apply.SetKind("Shoot")
	apply.SetNamespace(namespace)
	apply.SetName(shoot.Name)
	if err := unstructured.SetNestedField(apply.Object, "1.31.1", "spec", "kubernetes", "version"); err != nil {
		t.Fatal(err)
	}
	if err := garden.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(apply),
		client.FieldOwner("infrastructure-manager"), client.ForceOwnership); err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	got := waitForOperation(t, shoot.Name, gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateSucceeded)
	if got.Generation <= before.Generation || got.Spec.Kubernetes.Version != "1.31.1" {
		t.Errorf("generation %d -> %d, version %q", before.Generation, got.Generation, got.Spec.Kubernetes.Version)
	}
	checkReadyStatus(t, got, gardencorev1beta1.LastOperationTypeReconcile)
}

// checkAdminKubeconfig checks that the admin kubeconfig reaches the shoot cluster.
func checkAdminKubeconfig(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	req, err := adminKubeconfig(t.Context(), shoot.Name, 600)
	if err != nil {
		t.Fatalf("request admin kubeconfig: %v", err)
	}
	if d := time.Until(req.Status.ExpirationTimestamp.Time); d > 600*time.Second || d < 590*time.Second {
		t.Errorf("expires in %v, want 10m", d)
	}
	c := shootClient(t, req.Status.Kubeconfig)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyma-system"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace in shoot: %v", err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(ns), ns); err != nil {
		t.Fatalf("read namespace back: %v", err)
	}
}

// checkDeletionNeedsConfirmation checks that deletion without confirmation is forbidden.
func checkDeletionNeedsConfirmation(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	err := garden.Delete(t.Context(), &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: shoot.Name, Namespace: shoot.Namespace}})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("delete = %v, want Forbidden", err)
	}
	want := `shoots.core.gardener.cloud "lifecycle" is forbidden: must have a "confirmation.gardener.cloud/deletion" annotation to delete`
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
}

// checkConfirmedDeletion checks that confirmed deletion runs a Delete and the shoot disappears.
func checkConfirmedDeletion(t *testing.T, shoot *gardencorev1beta1.Shoot) {
	got := &gardencorev1beta1.Shoot{}
	if err := garden.Get(t.Context(), client.ObjectKeyFromObject(shoot), got); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(got.DeepCopy())
	metav1.SetMetaDataAnnotation(&got.ObjectMeta, v1beta1constants.ConfirmationDeletion, "true")
	if err := garden.Patch(t.Context(), got, patch); err != nil {
		t.Fatalf("confirm deletion: %v", err)
	}
	if err := garden.Delete(t.Context(), got); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitGone(t, shoot.Name)
	if _, ok := sim.ShootCluster(got); ok {
		t.Error("the shoot cluster still runs")
	}
}

// watchOperations watches a shoot through the proxy and returns a function
// that reports the distinct type/state pairs seen so far.
func watchOperations(t *testing.T, name string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w, err := garden.Watch(ctx, &gardencorev1beta1.ShootList{}, client.InNamespace(namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		t.Fatalf("watch shoots: %v", err)
	}
	seen := make(chan []string, 1)
	go func() {
		var states []string
		for ev := range w.ResultChan() {
			shoot, ok := ev.Object.(*gardencorev1beta1.Shoot)
			if !ok || ev.Type == watch.Error || shoot.Status.LastOperation == nil {
				continue
			}
			s := string(shoot.Status.LastOperation.Type) + "/" + string(shoot.Status.LastOperation.State)
			if len(states) == 0 || states[len(states)-1] != s {
				states = append(states, s)
			}
		}
		seen <- states
	}()
	return func() []string {
		w.Stop()
		cancel()
		return <-seen
	}
}

func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// checkReadyStatus checks what a successfully reconciled shoot shows.
func checkReadyStatus(t *testing.T, shoot *gardencorev1beta1.Shoot, typ gardencorev1beta1.LastOperationType) {
	t.Helper()
	st := shoot.Status
	if last := st.LastOperation; last.Type != typ || last.Progress != 100 {
		t.Errorf("lastOperation = %+v, want %s at 100%%", last, typ)
	}
	if st.ObservedGeneration != shoot.Generation {
		t.Errorf("observedGeneration = %d, generation %d", st.ObservedGeneration, shoot.Generation)
	}
	if len(st.AdvertisedAddresses) == 0 || !strings.HasPrefix(st.AdvertisedAddresses[0].URL, "https://") {
		t.Errorf("advertisedAddresses = %v", st.AdvertisedAddresses)
	}
	if st.SeedName == nil || st.Gardener.ID == "" || len(st.LastErrors) != 0 {
		t.Errorf("seedName %v, gardener %+v, lastErrors %v", st.SeedName, st.Gardener, st.LastErrors)
	}
	for _, ct := range []gardencorev1beta1.ConditionType{
		gardencorev1beta1.ShootAPIServerAvailable, gardencorev1beta1.ShootControlPlaneHealthy,
		gardencorev1beta1.ShootEveryNodeReady, gardencorev1beta1.ShootSystemComponentsHealthy,
	} {
		if !conditionTrue(st.Conditions, ct) {
			t.Errorf("condition %s is not True: %+v", ct, st.Conditions)
		}
	}
}

func conditionTrue(conds []gardencorev1beta1.Condition, t gardencorev1beta1.ConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == gardencorev1beta1.ConditionTrue
		}
	}
	return false
}

func hasFinalizerGardener(shoot *gardencorev1beta1.Shoot) bool {
	for _, f := range shoot.Finalizers {
		if f == "gardener" {
			return true
		}
	}
	return false
}
