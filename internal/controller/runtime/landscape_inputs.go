package runtime

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// ReasonACLConfigUnavailable is the reason when the landscape's ACL ConfigMap is missing or
// holds an address that is not a CIDR: a runtime that restricts its API server cannot get an
// access list that would keep the operators and the control plane in.
const ReasonACLConfigUnavailable = "ACLConfigUnavailable"

// ReasonACLNotApplied is the reason of a False APIServerACL condition: the Runtime restricts its
// API server, and the manager runs without API server ACLs.
const ReasonACLNotApplied = "ACLNotApplied"

// setACLCondition says whether the API server access list rt asks for is written to its shoot;
// enabled tells whether the manager writes access lists at all (--api-server-acl-enabled). A
// Runtime that asks for none has no such condition.
func setACLCondition(rt *infrav1.Runtime, enabled bool) {
	acl := rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL
	switch {
	case acl == nil || len(acl.AllowedCIDRs) == 0:
		meta.RemoveStatusCondition(&rt.Status.Conditions, infrav1.ConditionAPIServerACL)
	case !gardener.NeedsACL(rt):
		setCondition(rt, infrav1.ConditionAPIServerACL, false, ReasonACLNotApplied, fmt.Sprintf(
			"The Runtime restricts its API server, but the manager writes access lists only for the providers %v, not for %s: the API server admits every network",
			gardener.ACLProviders(), rt.Spec.Shoot.Provider.Type))
	case enabled:
		setCondition(rt, infrav1.ConditionAPIServerACL, true, "ACLApplied",
			"The API server admits only the networks the Runtime lists and the landscape's own")
	default:
		setCondition(rt, infrav1.ConditionAPIServerACL, false, ReasonACLNotApplied,
			"The Runtime restricts its API server, but the manager runs without --api-server-acl-enabled and writes no access list: the API server admits every network")
	}
}

// renderOptions returns the render options for rt. With API server ACLs on, they carry the
// operators' and the control plane's addresses from the ACL ConfigMap, which is read only for a
// runtime that restricts its API server.
func (s steps) renderOptions(ctx context.Context, rt *infrav1.Runtime) (gardener.RenderOptions, error) {
	opts := s.Render
	if s.ACLConfigMap.Name == "" {
		return opts, nil
	}
	opts.ACL = &gardener.ACL{}
	if !gardener.NeedsACL(rt) {
		return opts, nil
	}
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(ctx, s.ACLConfigMap, cm); err != nil {
		return opts, retry.Transient(ReasonACLConfigUnavailable, fmt.Errorf("read ACL ConfigMap %s: %w", s.ACLConfigMap, err))
	}
	acl, err := landscape.ParseACL(cm)
	if err != nil {
		return opts, retry.Transient(ReasonACLConfigUnavailable, err)
	}
	opts.ACL = acl
	return opts, nil
}

// inputs fingerprints what a runtime takes from outside the Runtime and may change at run time:
// the ACL addresses, for a runtime that restricts its API server, and whether the shoot of a
// provisioned runtime is gone. The engine runs a Ready runtime again when it changes, so a
// shoot deleted outside the manager fails its runtime at once (shootMissing), not at its next
// re-check.
func (s steps) inputs(o client.Object) string {
	rt, ok := o.(*infrav1.Runtime)
	if !ok {
		return ""
	}
	return s.aclInputs(rt) + s.shootInputs(rt)
}

// aclInputs fingerprints the landscape's ACL addresses for rt, "" when it restricts nothing.
func (s steps) aclInputs(rt *infrav1.Runtime) string {
	if s.ACLConfigMap.Name == "" || !gardener.NeedsACL(rt) {
		return ""
	}
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(context.Background(), s.ACLConfigMap, cm); err != nil {
		return "acl:unavailable"
	}
	return landscape.ACLFingerprint(cm)
}

// shootInputs is "shoot:missing" when the shoot of provisioned rt is not in the garden cache (a
// read without a request), "" otherwise. Without the shoot watch (UnwatchedShoots) the garden
// may have no cache: the missing shoot is then found at the next re-check.
func (s steps) shootInputs(rt *infrav1.Runtime) string {
	if s.Garden == nil || s.UnwatchedShoots || !provisioned(rt) {
		return ""
	}
	shoot := &gardencorev1beta1.Shoot{}
	err := s.Garden.Get(context.Background(), client.ObjectKey{Namespace: s.GardenNamespace, Name: rt.Spec.Shoot.Name}, shoot)
	if apierrors.IsNotFound(err) {
		return "shoot:missing"
	}
	return ""
}

// aclRuntimes maps a change of the ACL ConfigMap to the runtimes that restrict their API
// server, the ones whose shoot carries its addresses.
func (s steps) aclRuntimes(ctx context.Context, _ client.Object) []reconcile.Request {
	var list infrav1.RuntimeList
	// Copies: the cache keeps Runtimes in a stored form (StoredRuntime), which a List without
	// copies cannot hand out. The access list changes seldom.
	if err := s.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "list runtimes after an ACL ConfigMap change; they take it at their next re-check")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if rt := &list.Items[i]; gardener.NeedsACL(rt) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rt.Namespace, Name: rt.Name}})
		}
	}
	return out
}
