package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// schedulerFieldManager writes what the scheduler's binding sets.
const schedulerFieldManager = "gardener-scheduler"

// boundRequeue is how soon a freshly bound shoot is reconciled again to
// start its creation: at once (the first step of the controller's rate
// limiter).
const boundRequeue = 5 * time.Millisecond

// eventSchedulingFailed is the reason of the event an unschedulable shoot
// gets, as Gardener's scheduler names it.
const eventSchedulingFailed = gardencorev1beta1.ShootEventSchedulingFailed

// Seeds lists the garden's seeds.
type Seeds interface {
	// List returns every seed.
	List(ctx context.Context) ([]gardencorev1beta1.Seed, error)
}

// SeedsFunc adapts a function to Seeds.
type SeedsFunc func(ctx context.Context) ([]gardencorev1beta1.Seed, error)

// List implements Seeds.
func (f SeedsFunc) List(ctx context.Context) ([]gardencorev1beta1.Seed, error) { return f(ctx) }

// EverySeed is a seed of every provider and region, always ready: the
// default of a Reconciler without Seeds.
var EverySeed = SeedsFunc(func(context.Context) ([]gardencorev1beta1.Seed, error) { return nil, nil })

// determineSeed picks the seed for a shoot as Gardener's scheduler does:
// from the usable (not deleting, visible, ready) seeds, those the shoot's
// seedSelector matches and of the shoot's provider; preferably in the
// shoot's region, else any (the MinimalDistance strategy without the
// distances); the one with the fewest shoots, ties by name. The error is
// the scheduler's, word for word.
func determineSeed(shoot *gardencorev1beta1.Shoot, seeds []gardencorev1beta1.Seed, load map[string]int) (*gardencorev1beta1.Seed, error) {
	usable := filterSeeds(seeds, func(s *gardencorev1beta1.Seed) bool {
		return s.DeletionTimestamp == nil && s.Spec.Settings != nil && s.Spec.Settings.Scheduling != nil && s.Spec.Settings.Scheduling.Visible && SeedReady(s)
	})
	if len(usable) == 0 {
		return nil, fmt.Errorf("none of the %d seeds is valid for scheduling (not deleting, visible and ready)", len(seeds))
	}
	candidates := usable
	if sel := shoot.Spec.SeedSelector; sel != nil {
		selector, err := metav1.LabelSelectorAsSelector(&sel.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("label selector conversion failed: %v for seedSelector: %w", sel.LabelSelector, err)
		}
		candidates = filterSeeds(usable, func(s *gardencorev1beta1.Seed) bool { return selector.Matches(labels.Set(s.Labels)) })
		if len(candidates) == 0 {
			return nil, fmt.Errorf("none out of the %d seeds has the matching labels required by seed selector of '%s' (selector: '%s')", len(usable), "Shoot", selector.String())
		}
	}
	matching := filterSeeds(candidates, func(s *gardencorev1beta1.Seed) bool { return s.Spec.Provider.Type == shoot.Spec.Provider.Type })
	if len(matching) == 0 {
		return nil, fmt.Errorf("none out of the %d seeds has a matching provider for %q", len(candidates), shoot.Spec.Provider.Type)
	}
	if sameRegion := filterSeeds(matching, func(s *gardencorev1beta1.Seed) bool { return s.Spec.Provider.Region == shoot.Spec.Region }); len(sameRegion) > 0 {
		matching = sameRegion
	}
	slices.SortFunc(matching, func(a, b gardencorev1beta1.Seed) int {
		if d := load[a.Name] - load[b.Name]; d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return &matching[0], nil
}

func filterSeeds(seeds []gardencorev1beta1.Seed, keep func(*gardencorev1beta1.Seed) bool) []gardencorev1beta1.Seed {
	var out []gardencorev1beta1.Seed
	for i := range seeds {
		if keep(&seeds[i]) {
			out = append(out, seeds[i])
		}
	}
	return out
}

// SeedReady reports whether a seed is ready as the scheduler sees it: it
// has a last operation and its gardenlet is ready.
func SeedReady(s *gardencorev1beta1.Seed) bool {
	if s.Status.LastOperation == nil {
		return false
	}
	for _, c := range s.Status.Conditions {
		if c.Type == gardencorev1beta1.GardenletReady {
			return c.Status == gardencorev1beta1.ConditionTrue
		}
	}
	return false
}

// schedule binds an unscheduled shoot to a seed; a shoot no seed fits stays
// unscheduled with lastOperation Create/Pending, a SchedulingFailed event,
// and another try after the retry delay.
func (r *Reconciler) schedule(ctx context.Context, shoot *gardencorev1beta1.Shoot) (ctrl.Result, error) {
	seeds, err := r.seeds.List(ctx)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("list seeds: %w", err)
	}
	if seeds == nil {
		return r.bind(ctx, shoot, r.id.seed)
	}
	seed, err := determineSeed(shoot, seeds, r.seedLoad(ctx))
	if err != nil {
		return r.reportUnschedulable(ctx, shoot, err)
	}
	return r.bind(ctx, shoot, seed.Name)
}

// bind sets spec.seedName through the shoots/binding subresource, as gardener-scheduler does:
// gardener-apiserver keeps spec.seedName on any other write. Gardener's ShootDNS plugin gives
// the shoot its default domain on that binding.
func (r *Reconciler) bind(ctx context.Context, shoot *gardencorev1beta1.Shoot, seed string) (ctrl.Result, error) {
	shoot.Spec.SeedName = ptr.To(seed)
	if err := r.client.SubResource("binding").Update(ctx, shoot, &client.SubResourceUpdateOptions{
		UpdateOptions: client.UpdateOptions{FieldManager: schedulerFieldManager},
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("bind shoot %s/%s to seed %s: %w", shoot.Namespace, shoot.Name, seed, err)
	}
	log.FromContext(ctx).Info("Shoot scheduled", "seed", seed)
	r.record(shoot, corev1.EventTypeNormal, gardencorev1beta1.ShootEventSchedulingSuccessful, fmt.Sprintf("Scheduled to seed %q", seed))
	return ctrl.Result{RequeueAfter: boundRequeue}, nil
}

// reportUnschedulable records the failed scheduling as Gardener's
// scheduler does and tries again later.
func (r *Reconciler) reportUnschedulable(ctx context.Context, shoot *gardencorev1beta1.Shoot, cause error) (ctrl.Result, error) {
	description := "Failed to schedule Shoot: " + cause.Error()
	r.record(shoot, corev1.EventTypeWarning, eventSchedulingFailed, description)
	last := shoot.Status.LastOperation
	if last == nil || last.State != gardencorev1beta1.LastOperationStatePending || last.Description != description {
		patch := client.MergeFrom(shoot.DeepCopy())
		shoot.Status.LastOperation = &gardencorev1beta1.LastOperation{
			Type:           gardencorev1beta1.LastOperationTypeCreate,
			State:          gardencorev1beta1.LastOperationStatePending,
			Description:    description,
			LastUpdateTime: metav1.NewTime(r.clock.Now()),
		}
		if err := r.client.Status().Patch(ctx, shoot, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("report failed scheduling of shoot %s/%s: %w", shoot.Namespace, shoot.Name, err)
		}
	}
	log.FromContext(ctx).Info("Shoot not scheduled", "reason", cause.Error())
	return ctrl.Result{RequeueAfter: r.retryDelay}, nil
}

// seedLoad counts the shoots on each seed. It runs for every shoot scheduled and reads every
// shoot, so it reads the cache's own objects instead of deep copies: with deep copies of
// thousands of shoots for each one scheduled, the simulator fell behind its own operations in a
// benchmark of 5,000 runtimes on 2 cores, and they took minutes instead of their duration.
func (r *Reconciler) seedLoad(ctx context.Context) map[string]int {
	load := map[string]int{}
	list := &gardencorev1beta1.ShootList{}
	if err := r.client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return load
	}
	for _, s := range list.Items {
		if s.Spec.SeedName != nil {
			load[*s.Spec.SeedName]++
		}
	}
	return load
}
