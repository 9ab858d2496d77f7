package runtime

import (
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// seedWith returns a visible seed of provider aws in eu-central-1, labelled with its region,
// whose gardenlet reports ready, changed by change.
func seedWith(name string, change func(*gardencorev1beta1.Seed)) *gardencorev1beta1.Seed {
	seed := &gardencorev1beta1.Seed{}
	seed.Name = name
	seed.Labels = map[string]string{gardener.LabelSeedRegion: "eu-central-1"}
	seed.Spec.Provider = gardencorev1beta1.SeedProvider{Type: "aws", Region: "eu-central-1"}
	seed.Spec.Settings = &gardencorev1beta1.SeedSettings{Scheduling: &gardencorev1beta1.SeedSettingScheduling{Visible: true}}
	seed.Status.Conditions = []gardencorev1beta1.Condition{
		{Type: gardencorev1beta1.SeedBackupBucketsReady, Status: gardencorev1beta1.ConditionFalse},
		{Type: gardencorev1beta1.GardenletReady, Status: gardencorev1beta1.ConditionTrue},
	}
	if change != nil {
		change(seed)
	}
	return seed
}

// gardenletReady sets the seed's GardenletReady condition to status.
func gardenletReady(status gardencorev1beta1.ConditionStatus) func(*gardencorev1beta1.Seed) {
	return func(seed *gardencorev1beta1.Seed) {
		for i := range seed.Status.Conditions {
			if seed.Status.Conditions[i].Type == gardencorev1beta1.GardenletReady {
				seed.Status.Conditions[i].Status = status
			}
		}
	}
}

// TestSeedServes decides which seeds can host a shoot of provider aws in eu-central-1.
func TestSeedServes(t *testing.T) {
	tests := []struct {
		name   string
		change func(*gardencorev1beta1.Seed)
		want   bool
	}{
		{name: "a visible seed of the provider and region whose gardenlet is ready serves", want: true},
		{name: "a seed without scheduling settings is visible", change: func(s *gardencorev1beta1.Seed) { s.Spec.Settings = nil }, want: true},
		{name: "another provider does not", change: func(s *gardencorev1beta1.Seed) { s.Spec.Provider.Type = "gcp" }},
		{name: "another region does not", change: func(s *gardencorev1beta1.Seed) { s.Spec.Provider.Region = "eu-west-1" }},
		{name: "a seed being deleted does not", change: func(s *gardencorev1beta1.Seed) { s.DeletionTimestamp = &metav1.Time{Time: t0} }},
		{name: "an invisible seed does not", change: func(s *gardencorev1beta1.Seed) { s.Spec.Settings.Scheduling.Visible = false }},
		{name: "a gardenlet that is not ready does not", change: gardenletReady(gardencorev1beta1.ConditionFalse)},
		{name: "a gardenlet of unknown state does not", change: gardenletReady(gardencorev1beta1.ConditionUnknown)},
		{name: "a seed without GardenletReady does not", change: func(s *gardencorev1beta1.Seed) { s.Status.Conditions = s.Status.Conditions[:1] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := seedServes(seedWith("seed", tt.change), "aws", "eu-central-1"); got != tt.want {
				t.Errorf("seedServes %t, want %t", got, tt.want)
			}
		})
	}
}

// TestCheckSeed covers the seed check before a shoot's creation: only a Runtime that enforces
// its seed location needs a ready seed of its provider in its region.
func TestCheckSeed(t *testing.T) {
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// enforce is the Runtime's spec.shoot.enforceSeedLocation.
		enforce *bool
		seeds   []client.Object
		faults  []fault
		// want is checkSeed's error read as the outcome of a step that fails with it, Done for none.
		want fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// lists says the step listed the seeds.
		lists bool
	}{
		{
			name:    "a Runtime that does not enforce the seed location needs no seed",
			reason:  "Gardener picks a seed elsewhere, so no list is needed",
			enforce: ptr.To(false),
			want:    fsmtest.Done(),
		},
		{
			name:   "a Runtime that leaves it unset needs none either",
			reason: "unset means not enforced, as upstream reads it",
			want:   fsmtest.Done(),
		},
		{
			name:    "enforced without a ready seed in the region is the user's to fix",
			reason:  "only seeds of the provider and region whose gardenlet is ready count; the message names provider and region",
			enforce: ptr.To(true),
			seeds: []client.Object{
				seedWith("not-ready", gardenletReady(gardencorev1beta1.ConditionFalse)),
				seedWith("gcp", func(s *gardencorev1beta1.Seed) { s.Spec.Provider.Type = "gcp" }),
				seedWith("elsewhere", func(s *gardencorev1beta1.Seed) {
					s.Labels[gardener.LabelSeedRegion], s.Spec.Provider.Region = "eu-west-1", "eu-west-1"
				}),
			},
			want:  fsmtest.Terminal(ReasonSeedNotFound),
			says:  "no ready seed of provider aws in region eu-central-1",
			lists: true,
		},
		{
			name:    "enforced with a ready seed in the region passes",
			reason:  "one serving seed is enough, whatever the others are",
			enforce: ptr.To(true),
			seeds:   []client.Object{seedWith("not-ready", gardenletReady(gardencorev1beta1.ConditionFalse)), seedWith("ready", nil)},
			want:    fsmtest.Done(),
			lists:   true,
		},
		{
			name:    "seeds that cannot be listed are a transient error",
			reason:  "a garden that does not answer is no proof that the region has no seed",
			enforce: ptr.To(true),
			seeds:   []client.Object{seedWith("ready", nil)},
			faults:  []fault{{store: "garden", verb: "list", kind: "Seed", err: unavailable()}},
			want:    fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			lists:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			rt.Spec.Shoot.EnforceSeedLocation = tt.enforce
			w := newWorld(t, tt.seeds...)
			// Each case says which seeds the landscape has: none besides its own.
			if err := w.garden.Delete(t.Context(), testSeed("aws", "eu-central-1", true)); err != nil {
				t.Fatal(err)
			}
			w.resetCalls()
			w.fail(tt.faults...)

			out := fsm.Done()
			if err := w.steps.checkSeed(t.Context(), rt); err != nil {
				out = fsm.Fail(err)
			}

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			if listed := w.called("garden", "list", "Seed"); listed != tt.lists {
				t.Errorf("listed seeds %t, want %t", listed, tt.lists)
			}
			checkWrites(t, w, "garden")
		})
	}
}

// TestCheckSeedReusesAServingList: the shoots of a region created within the TTL share one list
// of its seeds; a list without a serving seed is never reused, so a region whose seeds come back
// passes at the next check, and one whose seeds went away fails once the TTL has passed.
func TestCheckSeedReusesAServingList(t *testing.T) {
	w := newWorld(t)
	w.steps.seeds = newSeedLists(30*time.Second, w.clock.Now)
	rt := newTestRuntime(t, "rt")
	rt.Spec.Shoot.EnforceSeedLocation = ptr.To(true)
	lists := func() int { return w.reads("garden", "Seed") }
	check := func(wantErr bool, wantLists int) {
		t.Helper()
		if err := w.steps.checkSeed(t.Context(), rt); (err != nil) != wantErr {
			t.Fatalf("checkSeed: %v, want an error %t", err, wantErr)
		}
		if got := lists(); got != wantLists {
			t.Fatalf("listed the seeds %d times, want %d", got, wantLists)
		}
	}

	check(false, 1)
	check(false, 1) // a second shoot of the region: the list is reused
	w.clock.Step(31 * time.Second)
	// The seed went away: the expired list is not trusted.
	if err := w.garden.Delete(t.Context(), testSeed("aws", "eu-central-1", true)); err != nil {
		t.Fatal(err)
	}
	check(true, 2)
	check(true, 3) // a list without a serving seed is not kept
	w.create(w.garden, testSeed("aws", "eu-central-1", true))
	check(false, 4)
	check(false, 4)
}
