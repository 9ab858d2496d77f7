package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// ReasonShootNameTaken is the reason of the terminal failure of a Runtime whose shoot name
// belongs to another Runtime.
const ReasonShootNameTaken = "ShootNameTaken"

// IndexShootName indexes the Runtimes in the controller's cache by spec.shoot.name.
const IndexShootName = "shoot-name"

// shootNameOf is the value of a Runtime in the shoot-name index: of the cache's stored form
// (StoredRuntime), or of a Runtime.
func shootNameOf(o client.Object) []string {
	var name string
	switch rt := o.(type) {
	case *StoredRuntime:
		name = rt.spec.Shoot.Name
	case *infrav1.Runtime:
		name = rt.Spec.Shoot.Name
	}
	if name == "" {
		return nil
	}
	return []string{name}
}

// claimShootName fails with a terminal error when the shoot rt names belongs to another
// Runtime. It runs before any write, so a Runtime that names a taken shoot changes nothing of
// the shoot, its ConfigMap or its cluster. The owner is, in this order:
//
//  1. the Runtime the shoot is labelled for (ownerLabels), even one that is gone: a shoot
//     left behind is not taken over by whoever names it next;
//  2. the Runtime whose runtime id the shoot carries (gardener.AnnotationRuntimeID), as
//     upstream's shoots carry it;
//  3. otherwise the oldest Runtime of the namespace that names the shoot, ties broken by name.
//
// The one race left is the one of runtime ids (see runtimeIDOwner): two Runtimes created in the
// same second may both pass before the cache holds the other. The first apply labels the shoot,
// and from then on rule 1 holds for both.
func (s steps) claimShootName(ctx context.Context, rt *infrav1.Runtime) error {
	shoot, err := s.currentShoot(ctx, rt)
	if err != nil {
		return err
	}
	if shoot != nil {
		if owner := gardenOwner(shoot, rt); owner != "" {
			return shootNameTaken(rt, owner)
		}
		if marked(shoot) {
			return nil
		}
	}
	claimants, err := s.shootNameClaimants(ctx, rt)
	if err != nil {
		return err
	}
	if oldest := claimants[0]; oldest.Name != rt.Name {
		return shootNameTaken(rt, "Runtime "+oldest.Namespace+"/"+oldest.Name+", which named it first")
	}
	return nil
}

// shootNameTaken is the terminal error of rt, whose shoot belongs to owner.
func shootNameTaken(rt *infrav1.Runtime, owner string) error {
	return retry.Terminal(ReasonShootNameTaken, fmt.Errorf(
		"shoot %s (spec.shoot.name) belongs to %s; Runtime %s needs a shoot name of its own, and changed nothing",
		rt.Spec.Shoot.Name, owner, rt.Name))
}

// shootNameClaimants lists the Runtimes of rt's namespace that name rt's shoot, rt among them,
// oldest first, from the controller's cache through its shoot-name index.
func (s steps) shootNameClaimants(ctx context.Context, rt *infrav1.Runtime) ([]infrav1.Runtime, error) {
	list := &infrav1.RuntimeList{}
	if err := s.Client.List(ctx, list, client.InNamespace(rt.Namespace), client.MatchingFields{IndexShootName: rt.Spec.Shoot.Name}); err != nil {
		return nil, fmt.Errorf("list the Runtimes with shoot %s: %w", rt.Spec.Shoot.Name, err)
	}
	return oldestFirst(list.Items, rt), nil
}

// oldestFirst returns runtimes with rt added when missing, by creationTimestamp, then name.
func oldestFirst(runtimes []infrav1.Runtime, rt *infrav1.Runtime) []infrav1.Runtime {
	if !slices.ContainsFunc(runtimes, func(o infrav1.Runtime) bool { return o.Name == rt.Name }) {
		runtimes = append(runtimes, *rt)
	}
	slices.SortFunc(runtimes, func(a, b infrav1.Runtime) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return runtimes
}

// gardenOwner names the owner of obj, an object the controller writes to the garden for a
// Runtime (its shoot or its authentication ConfigMap), when that owner is not rt; "" when obj
// is rt's or carries no mark of an owner. The marks are the owner labels this controller writes
// and the runtime id that this controller and upstream's write on a shoot.
func gardenOwner(obj client.Object, rt *infrav1.Runtime) string {
	labels := obj.GetLabels()
	if name, ok := labels[LabelRuntimeName]; ok {
		ns := labels[LabelRuntimeNamespace]
		if name != rt.Name || (ns != "" && ns != rt.Namespace) {
			return fmt.Sprintf("Runtime %s/%s (labels %s, %s)", ns, name, LabelRuntimeNamespace, LabelRuntimeName)
		}
		return ""
	}
	if id := obj.GetAnnotations()[gardener.AnnotationRuntimeID]; id != "" && id != rt.Labels[infrav1.LabelRuntimeID] {
		return fmt.Sprintf("runtime id %s (annotation %s)", id, gardener.AnnotationRuntimeID)
	}
	return ""
}

// marked reports whether obj carries a mark of its owner (see gardenOwner).
func marked(obj client.Object) bool {
	_, labelled := obj.GetLabels()[LabelRuntimeName]
	return labelled || obj.GetAnnotations()[gardener.AnnotationRuntimeID] != ""
}

// takenError is the terminal error of a write to obj, which gardenOwner says belongs to
// another Runtime, nil when it is rt's.
func takenError(obj client.Object, rt *infrav1.Runtime) error {
	if owner := gardenOwner(obj, rt); owner != "" {
		return shootNameTaken(rt, owner)
	}
	return nil
}
