package runtime

import (
	"fmt"
	"slices"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// ShootWrite is the write the controller makes to a Runtime's shoot in one pass.
type ShootWrite string

// The writes of PlanShoot.
const (
	// ShootWriteNone: the shoot holds what the Runtime asks, nothing is written.
	ShootWriteNone ShootWrite = "none"
	// ShootWriteSuspended: the Runtime suspends patching its existing shoot.
	ShootWriteSuspended ShootWrite = "suspended"
	// ShootWriteCreate: there is no shoot; it is created.
	ShootWriteCreate ShootWrite = "create"
	// ShootWriteTakeOver: a shoot this manager never applied holds the spec the Runtime asks;
	// only its labels and annotations are written, by a merge patch (adoptShoot).
	ShootWriteTakeOver ShootWrite = "take-over"
	// ShootWriteApply: the shoot is applied (server-side apply, forced ownership).
	ShootWriteApply ShootWrite = "apply"
)

// Change is one value a write changes: the field's path in the object, as the drift check
// names it (".spec.kubernetes.version", "[i]" for list elements), what the object has there
// (nil: nothing) and what the write puts there.
type Change struct {
	Path string `json:"path"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new"`
}

// ShootPlan is what the controller's ApplyShoot step would write to a Runtime's shoot.
type ShootPlan struct {
	// Write is the kind of write.
	Write ShootWrite
	// Changes are the values of the shoot the write changes; none for a create.
	Changes []Change
	// Kept says which values of the running shoot the render kept over the Runtime's.
	Kept []gardener.KeptVersion

	// shoot is the rendered shoot and ac its apply configuration, stamped with its hash.
	shoot *gardencorev1beta1.Shoot
	ac    *unstructured.Unstructured
}

// PlanShoot decides what the ApplyShoot step writes for rt to its shoot as Gardener has it,
// current (nil when there is none), under opts: the step carries the plan out, and `kubectl
// runtime plan` prints it. A shoot labelled for another Runtime is refused with ShootNameTaken,
// as the step refuses it before it reads anything else; the checks that read the garden (seeds)
// are the step's alone.
func PlanShoot(rt *infrav1.Runtime, current *gardencorev1beta1.Shoot, opts gardener.RenderOptions) (ShootPlan, error) {
	if current != nil {
		if err := takenError(current, rt); err != nil {
			return ShootPlan{}, err
		}
	}
	r, err := Render(rt, current, opts)
	if err != nil {
		return ShootPlan{}, err
	}
	p := ShootPlan{Kept: r.Kept, shoot: r.Shoot}
	if current != nil && patchSuspended(rt) {
		p.Write = ShootWriteSuspended
		return p, nil
	}
	if p.ac, err = applyConfiguration(r.Shoot); err != nil {
		return ShootPlan{}, err
	}
	write, err := needsWrite(rt, opts, p.ac, current)
	switch {
	case err != nil:
		return ShootPlan{}, err
	case !write:
		p.Write = ShootWriteNone
		return p, nil
	case current == nil:
		p.Write = ShootWriteCreate
		return p, nil
	}
	if p.Changes, err = changesTo(p.ac, current); err != nil {
		return ShootPlan{}, err
	}
	// A shoot whose spec already holds the render differs in its metadata only.
	p.Write = ShootWriteApply
	metadataOnly := !slices.ContainsFunc(p.Changes, func(c Change) bool { return !strings.HasPrefix(c.Path, ".metadata.") })
	if metadataOnly && !patchForced(rt) && !appliedByUs(current) {
		p.Write = ShootWriteTakeOver
	}
	return p, nil
}

// changesTo lists the values of the apply configuration ac that current does not hold.
func changesTo(ac *unstructured.Unstructured, current any) ([]Change, error) {
	cur, want, err := comparable(ac, current)
	if err != nil {
		return nil, err
	}
	var out []Change
	differences(cur, want, "", func(path string, got, want any) bool {
		out = append(out, Change{Path: path, Old: got, New: want})
		return true
	})
	return out, nil
}

// comparable returns current as a JSON map and ac without its type meta, which typed objects
// read through a client do not carry.
func comparable(ac *unstructured.Unstructured, current any) (cur, want map[string]any, err error) {
	if cur, err = toMap(current); err != nil {
		return nil, nil, fmt.Errorf("encode current %s: %w", ac.GetName(), err)
	}
	want = make(map[string]any, len(ac.Object))
	for k, v := range ac.Object {
		if k != "apiVersion" && k != "kind" {
			want[k] = v
		}
	}
	return cur, want, nil
}
