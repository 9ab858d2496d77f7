package runtime

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// TestApplyShoot covers when ApplyShoot writes the shoot and how it reports a refused write.
func TestApplyShoot(t *testing.T) {
	shootsGR := schema.GroupResource{Group: gardencorev1beta1.GroupName, Resource: "shoots"}
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// existing applies the Runtime's shoot once before the step under test, then changes it
		// with change (as another field manager, or Gardener, would).
		existing bool
		change   func(*gardencorev1beta1.Shoot)
		// runtime changes the Runtime before the step under test; landscape the converter
		// options before the first apply.
		runtime   func(*infrav1.Runtime)
		landscape func(*gardener.RenderOptions)
		faults    []fault
		want      fsmtest.Result
		// says is part of the message an operator reads, for the cases about that message.
		says string
		// writes are the garden writes of the step under test.
		writes []string
		// after checks the Runtime after the step, when set.
		after func(*testing.T, *infrav1.Runtime)
	}{
		{
			name:   "creates a new shoot",
			reason: "a Runtime without a shoot gets one, in one apply",
			want:   fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
		},
		{
			name:     "a re-check of a shoot as the Runtime asks writes nothing",
			reason:   "periodic re-checks must not load Gardener with writes that change nothing",
			existing: true,
			want:     fsmtest.Next(StepWaitForShoot),
		},
		{
			name:      "a re-check of a shoot whose domain Gardener assigned writes nothing",
			reason:    "a value Gardener defaults is not drift",
			existing:  true,
			landscape: func(o *gardener.RenderOptions) { o.DNS = nil },
			change: func(s *gardencorev1beta1.Shoot) {
				s.Spec.DNS = &gardencorev1beta1.DNS{Domain: ptr.To("rt.kyma.garden.example.com")}
			},
			want: fsmtest.Next(StepWaitForShoot),
		},
		{
			name:     "a re-check of a shoot Gardener moved to a newer patch version writes nothing",
			reason:   "Gardener's patch updates must not be rolled back",
			existing: true,
			change:   func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.28.9" },
			want:     fsmtest.Next(StepWaitForShoot),
		},
		{
			// The landscape's runtime config names APIs from 1.33 on (clustertrustbundles).
			name:     "a shoot moved to a minor version that serves more of the landscape's APIs gets their runtime config",
			reason:   "the rendered runtime config depends on the shoot's version, not only on the Runtime",
			existing: true,
			change:   func(s *gardencorev1beta1.Shoot) { s.Spec.Kubernetes.Version = "1.33.9" },
			want:     fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
		},
		{
			name:     "a value someone changed is applied again",
			reason:   "drift from the Runtime is corrected on the next pass",
			existing: true, change: func(s *gardencorev1beta1.Shoot) { s.Spec.Purpose = ptr.To(gardencorev1beta1.ShootPurposeTesting) },
			want: fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
		},
		{
			name:     "a Runtime that forces the patch writes an unchanged shoot",
			reason:   "the force-patch annotation is the operator's way to write past the skip",
			existing: true, runtime: func(rt *infrav1.Runtime) { rt.Annotations = map[string]string{AnnotationForcePatch: "true"} },
			want: fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
		},
		{
			name:     "a Runtime that suspends the patch leaves a drifted shoot alone",
			reason:   "the suspend-patch annotation lets an operator change a shoot by hand",
			existing: true, change: func(s *gardencorev1beta1.Shoot) { s.Spec.Purpose = ptr.To(gardencorev1beta1.ShootPurposeTesting) },
			runtime: func(rt *infrav1.Runtime) { rt.Annotations = map[string]string{AnnotationSuspendPatch: "true"} },
			want:    fsmtest.Next(StepWaitForShoot),
		},
		{
			name:    "a Runtime that suspends the patch still gets its first shoot",
			reason:  "suspending updates must not block provisioning",
			runtime: func(rt *infrav1.Runtime) { rt.Annotations = map[string]string{AnnotationSuspendPatch: "true"} },
			want:    fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
		},
		{
			name:     "a worker pool the Runtime dropped goes in a patch of the list before the apply",
			reason:   "an apply alone cannot remove a list item another manager added",
			existing: true,
			change: func(s *gardencorev1beta1.Shoot) {
				extra := s.Spec.Provider.Workers[0]
				extra.Name = "dropped"
				s.Spec.Provider.Workers = append(s.Spec.Provider.Workers, extra)
			},
			want: fsmtest.Next(StepWaitForShoot), writes: []string{"patch Shoot", "apply Shoot"},
		},
		{
			name:   "Gardener's admission refusing the shoot is the user's to fix",
			reason: "a retry cannot change admission's answer; the message passes on what admission refused",
			faults: []fault{{store: "garden", verb: "apply", kind: "Shoot", err: apierrors.NewForbidden(shootsGR, "rt", errors.New("machine type m5.huge is not offered"))}},
			want:   fsmtest.Terminal(ReasonShootRefused), writes: []string{"apply Shoot"},
			says: "machine type m5.huge is not offered",
		},
		{
			name:   "Gardener unavailable is retried",
			reason: "only admission's refusal is terminal; an unavailable Gardener keeps its transient class",
			faults: []fault{{store: "garden", verb: "apply", kind: "Shoot", err: apierrors.NewServiceUnavailable("try later")}},
			want:   fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable), writes: []string{"apply Shoot"},
		},
		{
			name:   "a failed read of the shoot writes nothing",
			reason: "a step that cannot see the shoot must not overwrite it blind",
			faults: []fault{{store: "garden", verb: "get", kind: "Shoot", err: apierrors.NewTooManyRequests("slow down", 3)}},
			want:   fsmtest.Plain(retry.ClassThrottled, retry.ReasonTooManyRequests),
		},
		{
			name:   "no ready seed in the enforced region fails before the shoot is created",
			reason: "a shoot that must stay in its region is not created where no seed can host it",
			runtime: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.EnforceSeedLocation = ptr.To(true)
				rt.Spec.Shoot.Region = "eu-west-1"
			},
			want: fsmtest.Terminal(ReasonSeedNotFound),
		},
		{
			name:     "a shoot labelled for another Runtime is not written",
			reason:   "a Runtime must never change another Runtime's cluster; the message names that Runtime",
			existing: true,
			change:   func(s *gardencorev1beta1.Shoot) { s.Labels[LabelRuntimeName] = "first" },
			want:     fsmtest.Terminal(ReasonShootNameTaken),
			says:     "shoot rt (spec.shoot.name) belongs to Runtime " + testNamespace + "/first",
		},
		{
			name:     "a shoot with another runtime id and no owner labels, as upstream leaves one, is not written",
			reason:   "upstream's shoots name their owner by runtime id alone; the message names that id",
			existing: true,
			change: func(s *gardencorev1beta1.Shoot) {
				delete(s.Labels, LabelRuntimeName)
				s.Annotations[gardener.AnnotationRuntimeID] = "rid-first"
			},
			want: fsmtest.Terminal(ReasonShootNameTaken),
			says: "shoot rt (spec.shoot.name) belongs to runtime id rid-first",
		},
		{
			name:     "an upstream shoot of the same runtime id is written",
			reason:   "adoption takes over upstream's shoot of the same runtime id",
			existing: true,
			change: func(s *gardencorev1beta1.Shoot) {
				delete(s.Labels, LabelRuntimeName)
				s.Spec.Purpose = ptr.To(gardencorev1beta1.ShootPurposeTesting)
			},
			want: fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
		},
		{
			name:   "the shoot of a provisioned runtime that went missing is not created again",
			reason: "a silently recreated cluster would lose its workloads; the message tells the operator the shoot is gone",
			runtime: func(rt *infrav1.Runtime) {
				rt.Status.ProvisioningCompleted, rt.Status.RetryRequestedAt = true, "2026-12-01T10:00:00Z"
			},
			want: fsmtest.Terminal(ReasonShootMissing),
			says: "shoot rt of this provisioned runtime is gone",
			after: func(t *testing.T, rt *infrav1.Runtime) {
				if m := rt.Status.ShootMissing; m == nil || m.RetryRequestedAt != "2026-12-01T10:00:00Z" {
					t.Errorf("status.shootMissing %+v, want the retry pending when the shoot went missing", m)
				}
			},
		},
		{
			name:   "a shoot upstream reported provisioned that went missing is not created again",
			reason: "upstream's Provisioned condition counts as provisioned for an adopted Runtime",
			runtime: func(rt *infrav1.Runtime) {
				setCondition(rt, infrav1.ConditionProvisioned, true, "Provisioned", "Runtime provisioned")
			},
			want: fsmtest.Terminal(ReasonShootMissing),
		},
		{
			name:   "a probe of a runtime whose shoot went missing creates nothing",
			reason: "once reported missing, only a new manual retry creates the shoot",
			runtime: func(rt *infrav1.Runtime) {
				rt.Status.ProvisioningCompleted, rt.Status.RetryRequestedAt = true, "2026-12-01T10:00:00Z"
				rt.Status.ShootMissing = &infrav1.ShootMissingStatus{RetryRequestedAt: "2026-12-01T10:00:00Z"}
			},
			want: fsmtest.Terminal(ReasonShootMissing),
		},
		{
			name:   "a manual retry after the shoot went missing creates it again",
			reason: "a manual retry is the operator's consent to a new cluster",
			runtime: func(rt *infrav1.Runtime) {
				rt.Status.ProvisioningCompleted, rt.Status.RetryRequestedAt = true, "2026-12-02T10:00:00Z"
				rt.Status.ShootMissing = &infrav1.ShootMissingStatus{RetryRequestedAt: "2026-12-01T10:00:00Z"}
			},
			want: fsmtest.Next(StepWaitForShoot), writes: []string{"apply Shoot"},
			after: func(t *testing.T, rt *infrav1.Runtime) {
				// Kept until the shoot is seen: a pass whose cache does not hold the new shoot yet
				// applies it again instead of failing.
				if m := rt.Status.ShootMissing; m == nil || m.RetryRequestedAt != "2026-12-01T10:00:00Z" {
					t.Errorf("status.shootMissing %+v right after the create, want it kept until the shoot is seen", m)
				}
			},
		},
		{
			name:     "a shoot seen again after it went missing is forgotten as missing",
			reason:   "a stale missing mark would block a later re-creation",
			existing: true,
			runtime: func(rt *infrav1.Runtime) {
				rt.Status.ProvisioningCompleted, rt.Status.RetryRequestedAt = true, "2026-12-02T10:00:00Z"
				rt.Status.ShootMissing = &infrav1.ShootMissingStatus{RetryRequestedAt: "2026-12-01T10:00:00Z"}
			},
			want: fsmtest.Next(StepWaitForShoot),
			after: func(t *testing.T, rt *infrav1.Runtime) {
				if rt.Status.ShootMissing != nil {
					t.Errorf("status.shootMissing %+v with the shoot there again, want none", rt.Status.ShootMissing)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			w := newWorld(t, rt)
			if tt.landscape != nil {
				tt.landscape(&w.steps.Render)
			}
			if tt.existing {
				if out := w.steps.applyShoot(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
					t.Fatal("first apply")
				}
			}
			if tt.change != nil {
				shoot := testShoot(rt)
				w.get(w.garden, shoot)
				tt.change(shoot)
				if err := w.garden.Update(t.Context(), shoot); err != nil {
					t.Fatal(err)
				}
			}
			if tt.runtime != nil {
				tt.runtime(rt)
			}
			w.fail(tt.faults...)
			w.resetCalls()

			out := w.steps.applyShoot(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("outcome %s does not say %q", out, tt.says)
			}
			checkWrites(t, w, "garden", tt.writes...)
			if tt.after != nil {
				tt.after(t, rt)
			}
		})
	}
}

// TestApplyShootWritesWhatRenderRenders: the shoot in the garden is the render of the Runtime,
// labelled with it and stamped with its generation and the applied hash, and its dropped
// worker pools are gone.
func TestApplyShootWritesWhatRenderRenders(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	rt.Generation = 7
	w := newWorld(t, rt)
	if out := w.steps.applyShoot(t.Context(), rt); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
		t.Fatal("apply")
	}
	shoot := testShoot(rt)
	w.get(w.garden, shoot)
	r, err := Render(rt, nil, w.steps.Render)
	if err != nil {
		t.Fatal(err)
	}
	if shoot.Spec.Region != r.Shoot.Spec.Region || shoot.Spec.Provider.Type != rt.Spec.Shoot.Provider.Type ||
		shoot.Spec.Kubernetes.Version != r.Shoot.Spec.Kubernetes.Version {
		t.Errorf("shoot region %s, provider %s, Kubernetes %s: not the render of the Runtime",
			shoot.Spec.Region, shoot.Spec.Provider.Type, shoot.Spec.Kubernetes.Version)
	}
	if shoot.Labels[LabelRuntimeName] != rt.Name || shoot.Labels[LabelRuntimeNamespace] != rt.Namespace {
		t.Errorf("labels %v do not name the Runtime", shoot.Labels)
	}
	if got := shoot.Annotations[AnnotationRuntimeGeneration]; got != strconv.Itoa(7) {
		t.Errorf("runtime generation annotation %q, want 7", got)
	}
	if shoot.Annotations[AnnotationAppliedHash] == "" {
		t.Error("the shoot carries no applied hash, so every re-check would write it")
	}
	if c := findCondition(rt, infrav1.ConditionVersionsAsRequested); c == nil || c.Status != "True" {
		t.Errorf("condition %s: %+v, want True", infrav1.ConditionVersionsAsRequested, c)
	}

	// An operator's apply added a pool; the Runtime never asked for it.
	extra := shoot.Spec.Provider.Workers[0]
	extra.Name = "dropped"
	shoot.Spec.Provider.Workers = append(shoot.Spec.Provider.Workers, extra)
	if err := w.garden.Update(t.Context(), shoot); err != nil {
		t.Fatal(err)
	}
	if out := w.steps.applyShoot(t.Context(), rt); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
		t.Fatal("apply after the change")
	}
	w.get(w.garden, shoot)
	var names []string
	for _, p := range shoot.Spec.Provider.Workers {
		names = append(names, p.Name)
	}
	if want := []string{rt.Spec.Shoot.Provider.Workers[0].Name}; !slices.Equal(names, want) {
		t.Errorf("worker pools %v, want %v", names, want)
	}
}

// TestApplyShootTakesOverWithoutChangingTheSpec: a shoot another manager created exactly as the
// Runtime asks gets only this manager's labels and annotations, by a merge patch that leaves
// its spec's bytes alone, and the next pass writes nothing. One whose spec differs is applied.
func TestApplyShootTakesOverWithoutChangingTheSpec(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		change       func(*gardencorev1beta1.Shoot)
		writes       []string
	}{
		{
			name:   "spec as the Runtime asks",
			reason: "rewriting an equal spec could still make Gardener reconcile the cluster",
			writes: []string{"patch Shoot"},
		},
		{
			name:   "spec differs",
			reason: "a takeover must not leave a spec the Runtime does not ask for",
			change: func(s *gardencorev1beta1.Shoot) { s.Spec.Purpose = ptr.To(gardencorev1beta1.ShootPurposeTesting) },
			writes: []string{"apply Shoot"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsmtest.Because(t, tc.reason)
			rt := newTestRuntime(t, "rt")
			w := newWorld(t, rt)
			r, err := Render(rt, nil, w.steps.Render)
			if err != nil {
				t.Fatal(err)
			}
			// As another manager leaves it: created, without this manager's labels.
			theirs := r.Shoot.DeepCopy()
			theirs.Labels = map[string]string{"example.com/theirs": "kept"}
			theirs.Annotations = nil
			if tc.change != nil {
				tc.change(theirs)
			}
			w.create(w.garden, theirs)
			w.resetCalls()

			if out := w.steps.applyShoot(t.Context(), rt); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
				t.Fatal("take over")
			}
			checkWrites(t, w, "garden", tc.writes...)
			shoot := testShoot(rt)
			w.get(w.garden, shoot)
			if shoot.Labels[LabelRuntimeName] != rt.Name || shoot.Labels["example.com/theirs"] != "kept" {
				t.Errorf("labels %v, want the Runtime's added to the other manager's", shoot.Labels)
			}
			if shoot.Annotations[AnnotationAppliedHash] == "" {
				t.Error("the shoot carries no applied hash after the takeover")
			}

			w.resetCalls()
			if out := w.steps.applyShoot(t.Context(), rt); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
				t.Fatal("re-check")
			}
			checkWrites(t, w, "garden")
		})
	}
}

// TestApplyShootRemembersAVerdict: once ApplyShoot found the shoot as the Runtime asks, the next
// pass over the same Runtime and shoot takes the verdict without rendering. A change of the
// shoot (a new resourceVersion), of the Runtime, or of the landscape inputs renders again, and
// a drifted shoot is applied.
func TestApplyShootRemembersAVerdict(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt)
	w.steps.verdicts = &verdicts{}
	stored := func() *infrav1.Runtime { return w.stored(rt) }
	for pass := range 2 {
		if out := w.steps.applyShoot(t.Context(), stored()); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
			t.Fatalf("pass %d", pass)
		}
	}
	shoot := testShoot(rt)
	w.get(w.garden, shoot)
	if !w.steps.verdicts.holds(verdictShoot, stored(), shootVerdict(stored(), shoot, stored().Status.ObservedInputs)) {
		t.Fatal("the pass that found the shoot as asked left no verdict")
	}
	// A verdict stands for the resourceVersions and inputs it was reached on, no others.
	other := stored()
	other.ResourceVersion += "0"
	changedShoot := shoot.DeepCopy()
	changedShoot.ResourceVersion += "0"
	for name, stands := range map[string]bool{
		"another Runtime version": w.steps.verdicts.holds(verdictShoot, other, shootVerdict(other, shoot, stored().Status.ObservedInputs)),
		"another shoot version":   w.steps.verdicts.holds(verdictShoot, stored(), shootVerdict(stored(), changedShoot, stored().Status.ObservedInputs)),
		"other landscape inputs":  w.steps.verdicts.holds(verdictShoot, stored(), shootVerdict(stored(), shoot, "acl:changed")),
	} {
		if stands {
			t.Errorf("the verdict stands for %s", name)
		}
	}

	// Someone changes the shoot's autoscaler maximum behind the manager's back.
	want := shoot.Spec.Provider.Workers[0].Maximum
	shoot.Spec.Provider.Workers[0].Maximum += 5
	if err := w.garden.Update(t.Context(), shoot); err != nil {
		t.Fatal(err)
	}
	w.resetCalls()
	if out := w.steps.applyShoot(t.Context(), stored()); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
		t.Fatal("apply after the drift")
	}
	w.get(w.garden, shoot)
	if got := shoot.Spec.Provider.Workers[0].Maximum; got != want {
		t.Errorf("worker maximum %d after the pass, want %d: the verdict hid the drift", got, want)
	}
}

// TestApplyShootReadsTheSpecFromGardener runs ApplyShoot as the manager does, on a garden cache
// whose shoots have no spec to compare (gardener.TrimShoot): the step reads the shoot from
// Gardener when its verdict does not stand, and only then. A drift of the spec comes with a new
// generation, which ends the verdict; a new status does not.
func TestApplyShootReadsTheSpecFromGardener(t *testing.T) {
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, rt)
	w.steps.verdicts = &verdicts{}
	w.trimGardenCache()
	// pass runs the step on the stored Runtime and returns how often it read the shoot from
	// Gardener.
	pass := func(name string) int {
		t.Helper()
		w.resetCalls()
		if out := w.steps.applyShoot(t.Context(), w.stored(rt)); !fsmtest.Check(t, out, fsmtest.Next(StepWaitForShoot)) {
			t.Fatalf("%s: the pass did not move on", name)
		}
		return w.reads("gardener", "Shoot")
	}
	// Gardener changes the shoot: a new spec comes with a new generation.
	change := func(f func(*gardencorev1beta1.Shoot)) {
		t.Helper()
		shoot := testShoot(rt)
		w.get(w.garden, shoot)
		f(shoot)
		if err := w.garden.Update(t.Context(), shoot); err != nil {
			t.Fatal(err)
		}
	}
	if n := pass("create"); n != 0 {
		t.Errorf("the create read the missing shoot from Gardener %d times", n)
	}
	change(func(s *gardencorev1beta1.Shoot) { s.Generation = 1 })
	if n := pass("first re-check"); n != 1 {
		t.Errorf("the first re-check read the shoot from Gardener %d times, want 1: the cache has no spec to compare", n)
	}
	if n := pass("second re-check"); n != 0 || len(w.writes("garden")) > 0 {
		t.Errorf("the second re-check read the shoot %d times and wrote %v, want neither: the verdict stands", n, w.writes("garden"))
	}
	change(func(s *gardencorev1beta1.Shoot) {
		s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile, State: gardencorev1beta1.LastOperationStateSucceeded}
	})
	if n := pass("after a new status"); n != 0 {
		t.Errorf("a new status made the step read the shoot %d times, want 0", n)
	}
	// Someone changes the autoscaler maximum behind the manager's back.
	shoot := testShoot(rt)
	w.get(w.garden, shoot)
	want := shoot.Spec.Provider.Workers[0].Maximum
	change(func(s *gardencorev1beta1.Shoot) { s.Spec.Provider.Workers[0].Maximum += 5; s.Generation = 2 })
	if n := pass("after the drift"); n != 1 {
		t.Errorf("the drifted shoot was read %d times, want 1", n)
	}
	w.get(w.garden, shoot)
	if got := shoot.Spec.Provider.Workers[0].Maximum; got != want {
		t.Errorf("worker maximum %d after the pass, want %d: the drift was not applied back", got, want)
	}
	// A shoot the cache still holds but Gardener no longer has fails the pass, naming Gardener.
	w.fail(fault{store: "gardener", verb: "get", kind: "Shoot", err: apierrors.NewNotFound(schema.GroupResource{Group: gardencorev1beta1.GroupName, Resource: "shoots"}, "rt"), times: 1})
	change(func(s *gardencorev1beta1.Shoot) { s.Generation = 3 })
	w.resetCalls()
	out := w.steps.applyShoot(t.Context(), w.stored(rt))
	if fsmtest.ResultOf(out).Kind != fsm.KindFail || !strings.Contains(out.String(), "read shoot rt from Gardener") {
		t.Errorf("a shoot gone from Gardener: outcome %s, want a failure that says it read the shoot from Gardener", out)
	}
}
