package runtime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
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

// convertOptions returns the conversion options for rt. With API server ACLs on, they carry the
// operators' and the control plane's addresses from the ACL ConfigMap, which is read only for a
// runtime that restricts its API server.
func (s steps) convertOptions(ctx context.Context, rt *infrav1.Runtime) (gardener.ConvertOptions, error) {
	opts := s.Convert
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

// inputs fingerprints what a runtime's shoot takes from outside the Runtime and may change at
// run time: the ACL addresses, for a runtime that restricts its API server. The engine runs a
// Ready runtime again when it changes.
func (s steps) inputs(o client.Object) string {
	rt, ok := o.(*infrav1.Runtime)
	if !ok || s.ACLConfigMap.Name == "" || !gardener.NeedsACL(rt) {
		return ""
	}
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(context.Background(), s.ACLConfigMap, cm); err != nil {
		return "acl:unavailable"
	}
	return landscape.ACLFingerprint(cm)
}

// aclRuntimes maps a change of the ACL ConfigMap to the runtimes that restrict their API
// server, the ones whose shoot carries its addresses.
func (s steps) aclRuntimes(ctx context.Context, _ client.Object) []reconcile.Request {
	var list infrav1.RuntimeList
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
