package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// ReasonInvalidJWKS is the reason of the terminal failure of a Runtime whose OIDC key set (jwks)
// is not a JWK set: admission checks only its shape, since CEL does not parse JSON.
const ReasonInvalidJWKS = "InvalidJWKS"

// ReasonRuntimeIDTaken is the reason of the terminal failure of a Runtime whose runtime id
// belongs to another Runtime.
const ReasonRuntimeIDTaken = "RuntimeIDTaken"

// initialise checks the labels the other steps rely on and the OIDC key sets. It checks that the
// runtime id and the shoot name are the Runtime's own, and adds the finalizer, so a Runtime is
// never deleted before its shoot. A Runtime adopted from upstream has its finalizer replaced by this controller's in the same
// write, so it is never without one. A Runtime whose runtime id or shoot belongs to another
// fails before it gets the finalizer or writes anything.
func (s steps) initialise(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	for _, l := range infrav1.RequiredRuntimeLabels {
		if rt.Labels[l] == "" {
			return fsm.Fail(retry.Terminal("MissingLabel", fmt.Errorf("label %s is missing", l)))
		}
	}
	if errs := rt.ValidateJWKS(); len(errs) > 0 {
		return fsm.Fail(retry.Terminal(ReasonInvalidJWKS, errs.ToAggregate()))
	}
	if err := s.claimRuntimeID(ctx, rt); err != nil {
		return fsm.Fail(err)
	}
	if err := s.claimShootName(ctx, rt); err != nil {
		return fsm.Fail(err)
	}
	added := controllerutil.AddFinalizer(rt, Finalizer)
	if controllerutil.RemoveFinalizer(rt, UpstreamFinalizer) || added {
		if err := writeFinalizers(ctx, s.Client, rt); err != nil {
			return fsm.Fail(fmt.Errorf("add finalizer: %w", err))
		}
	}
	return fsm.Next(StepApplyAuthentication)
}

// claimRuntimeID fails with a terminal error when rt's runtime id belongs to another Runtime.
// The GardenerCluster and the kubeconfig Secret of a runtime are named after its runtime id, so
// two Runtimes with one id (upstream's examples all carry the placeholder runtime-id) would
// share them: the GardenerCluster's shoot would flip between their shoots and the Secret would
// hold whichever kubeconfig was fetched last. The id is the first claimant's (runtimeIDOwner);
// any other is a user error, reported before it creates a shoot.
func (s steps) claimRuntimeID(ctx context.Context, rt *infrav1.Runtime) error {
	owner, err := s.runtimeIDOwner(ctx, rt)
	if err != nil {
		return err
	}
	if owner.Name == rt.Name {
		return nil
	}
	return runtimeIDTaken(rt, owner)
}

// runtimeIDTaken is the terminal error of rt, whose runtime id belongs to owner.
func runtimeIDTaken(rt, owner *infrav1.Runtime) error {
	return retry.Terminal(ReasonRuntimeIDTaken, fmt.Errorf(
		"runtime id %s (label %s) belongs to Runtime %s, which claimed it first and holds the GardenerCluster %s and the Secret %s; Runtime %s needs a runtime id of its own",
		rt.Labels[infrav1.LabelRuntimeID], infrav1.LabelRuntimeID, owner.Name, gardenerClusterName(rt), kubeconfigSecretName(rt), rt.Name))
}

// runtimeIDOwner returns the Runtime that owns rt's runtime id, among the Runtimes of rt's
// namespace that carry it (runtimeIDClaimants). The owner is:
//
//  1. the claimant that holds the id's GardenerCluster (holdsGardenerCluster). It is the Runtime
//     whose shoot the kubeconfig Secret serves and whose cluster the other components reach, so
//     the id stays with it; this also settles Runtimes that already shared an id (under upstream,
//     or in a race, below) in favour of the one that holds the GardenerCluster now, and nothing
//     changes the owner while the GardenerCluster exists.
//  2. otherwise the oldest claimant by creationTimestamp, ties broken by name. The order does not
//     change with time, restarts or re-checks, and a Runtime created later never passes one
//     created before it, so the oldest keeps the id from its first step until it holds the
//     GardenerCluster (1).
//
// Runtimes being deleted still claim: the id is free once the owner is gone, and its deletion
// removed its GardenerCluster. The one race left is two Runtimes created in the same second, the
// first of which ran this step before the second was in the cache: both may pass it, each may
// create its shoot, and whichever creates the GardenerCluster first keeps the id (1); the other
// is stopped by ensureGardenerCluster, and by this step at its next run.
func (s steps) runtimeIDOwner(ctx context.Context, rt *infrav1.Runtime) (*infrav1.Runtime, error) {
	claimants, err := s.runtimeIDClaimants(ctx, rt)
	if err != nil {
		return nil, err
	}
	if len(claimants) == 1 {
		return &claimants[0], nil
	}
	gc := &infrav1.GardenerCluster{}
	err = s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: gardenerClusterName(rt)}, gc)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("get GardenerCluster %s: %w", gardenerClusterName(rt), err)
	default:
		if holder := gardenerClusterHolder(gc, claimants); holder != nil {
			return holder, nil
		}
	}
	return &claimants[0], nil
}

// runtimeIDClaimants lists the Runtimes of rt's namespace that carry rt's runtime id, rt among
// them, oldest first (by creationTimestamp, then name), from the controller's cache: a label
// selector would scan every Runtime of the namespace on every pass. The runtime-id index holds
// the Runtimes named otherwise than their runtime id (runtimeIDOf); the one named after it is
// read by name, unless it is rt.
func (s steps) runtimeIDClaimants(ctx context.Context, rt *infrav1.Runtime) ([]infrav1.Runtime, error) {
	id := rt.Labels[infrav1.LabelRuntimeID]
	list := &infrav1.RuntimeList{}
	if err := s.Client.List(ctx, list, client.InNamespace(rt.Namespace), client.MatchingFields{IndexRuntimeID: id}); err != nil {
		return nil, fmt.Errorf("list the Runtimes with runtime id %s: %w", id, err)
	}
	if id != rt.Name {
		named := &infrav1.Runtime{}
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: id}, named)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("get Runtime %s: %w", id, err)
		case named.Labels[infrav1.LabelRuntimeID] == id:
			list.Items = append(list.Items, *named)
		}
	}
	return oldestFirst(list.Items, rt), nil
}

// gardenerClusterHolder returns the claimant that holds gc, the oldest if several do, or nil
// when none does (the GardenerCluster of a Runtime that is gone).
func gardenerClusterHolder(gc *infrav1.GardenerCluster, claimants []infrav1.Runtime) *infrav1.Runtime {
	for i := range claimants {
		if holdsGardenerCluster(&claimants[i], gc) {
			return &claimants[i]
		}
	}
	return nil
}

// IndexRuntimeID indexes the Runtimes in the controller's cache by their runtime-id label.
const IndexRuntimeID = "runtime-id"

// runtimeIDOf is the value of a Runtime in the runtime-id index: its runtime id, unless the
// Runtime is named after it, as the Kyma Environment Broker names every Runtime; those are found
// by name (runtimeIDClaimants). An index keeps a set per value, about 200 bytes even for one
// Runtime, so a fleet named that way keeps the index empty instead of a set per Runtime.
func runtimeIDOf(o client.Object) []string {
	if id := labelOf(o, infrav1.LabelRuntimeID); id != "" && id != o.GetName() {
		return []string{id}
	}
	return nil
}

// writeFinalizers writes rt's finalizers as they are now, and nothing else: a JSON merge patch
// of the list, on the resourceVersion rt was read with, so a Runtime changed in between
// conflicts and the step runs again. An update would write back the whole Runtime as the cache
// keeps it, and the cache drops what no step reads (kubectl's copy of the last apply among it).
func writeFinalizers(ctx context.Context, c client.Writer, rt *infrav1.Runtime) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": rt.Finalizers, "resourceVersion": rt.ResourceVersion,
	}})
	if err != nil {
		return fmt.Errorf("encode finalizers: %w", err)
	}
	// The patch goes out from a copy: the reply would replace rt's status, which the pass may
	// have changed and the engine writes at its end. rt takes the new resourceVersion.
	written := rt.DeepCopy()
	if err := c.Patch(ctx, written, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("write finalizers: %w", err)
	}
	rt.ResourceVersion = written.ResourceVersion
	return nil
}
