package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// KymaNamespace is created in every runtime.
const KymaNamespace = "kyma-system"

// configureCluster prepares the runtime's own cluster: the kyma-system namespace, one
// cluster-admin binding per administrator, and the kyma-provisioning-info ConfigMap. Bindings
// the controller manages but the spec no longer lists are removed; bindings anyone else made
// are left alone. A re-check that finds everything in place reads the cluster two or three
// times: the ConfigMap (whose presence says the namespace is there), this manager's bindings,
// and upstream's bindings while any may be left (upstreamAdminsLeft).
func (s steps) configureCluster(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	c, err := s.Clusters.Connect(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	info, err := readProvisioningInfo(ctx, c)
	if err != nil {
		return fsm.Fail(err)
	}
	if info == nil {
		if err := ensureNamespace(ctx, c, KymaNamespace); err != nil {
			return fsm.Fail(err)
		}
	}
	setCondition(rt, infrav1.ConditionKymaSystemNSCreated, true, "KymaSystemCreated", "kyma-system namespace created")
	if err := s.reconcileAdministrators(ctx, c, rt); err != nil {
		return fsm.Fail(err)
	}
	if err := s.applyProvisioningInfo(ctx, c, rt, info); err != nil {
		return fsm.Fail(err)
	}
	setCondition(rt, infrav1.ConditionConfigured, true, "RuntimeConfigured", "Namespace and administrator bindings are in place")
	rt.Status.ProvisioningCompleted = true
	return fsm.Done()
}

// ensureNamespace creates the namespace unless it exists: a re-check reads it, and writes
// nothing.
func ensureNamespace(ctx context.Context, c Objects, name string) error {
	ns := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	ns.Name = name
	if err := client.IgnoreAlreadyExists(c.Create(ctx, ns)); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// upstreamAdminSelector selects the administrator bindings upstream's manager treats as its own:
// it marks those it creates (named admin-<random>) with the reconciler label alone, value
// infrastructure-manager, and also manages the ones the provisioner before it left, value
// reconciler.
var upstreamAdminSelector = mustSelector(LabelUpstreamReconcilerManagedBy + " in (" + upstreamManager + "," + upstreamProvisioner + ")")

// upstreamProvisioner is the reconciler label's value on the bindings of upstream's predecessor.
const upstreamProvisioner = "reconciler"

func mustSelector(s string) labels.Selector {
	sel, err := labels.Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// reconcileAdministrators makes the managed cluster-admin bindings match the Runtime's
// administrators. Bindings upstream manages are managed too, by upstream's rule: one that names
// a listed administrator (or a ServiceAccount) among its subjects stands for the administrators
// it names, and one that makes nobody listed cluster-admin is removed.
func (s steps) reconcileAdministrators(ctx context.Context, c Objects, rt *infrav1.Runtime) error {
	want := map[string]string{}
	for _, a := range rt.Spec.Security.Administrators {
		want[adminBindingName(a)] = a
	}
	if s.upstreamAdminsLeft(rt) {
		left, err := reconcileUpstreamAdministrators(ctx, c, want)
		if err != nil {
			return err
		}
		if !left && s.upstreamAdminsGone != nil {
			s.upstreamAdminsGone.Store(client.ObjectKeyFromObject(rt), rt.UID)
		}
	}
	have := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, have, client.MatchingLabels{LabelManagedBy: FieldOwner}); err != nil {
		return fmt.Errorf("list administrator bindings: %w", err)
	}
	for i := range have.Items {
		b := &have.Items[i]
		if admin, ok := want[b.Name]; ok && upstreamAdmin(b) == admin {
			delete(want, b.Name)
			continue
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, b)); err != nil {
			return fmt.Errorf("delete administrator binding %s: %w", b.Name, err)
		}
	}
	for name, admin := range want {
		b := &rbacv1.ClusterRoleBinding{
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: admin}},
		}
		b.Name = name
		b.Labels = map[string]string{LabelManagedBy: FieldOwner}
		if err := client.IgnoreAlreadyExists(c.Create(ctx, b)); err != nil {
			return fmt.Errorf("create administrator binding for %s: %w", admin, err)
		}
	}
	return nil
}

// upstreamAdminsLeft reports whether rt's cluster may still hold administrator bindings of
// upstream's manager. Only upstream's manager makes them, and this manager holds its lease, so
// once a pass of this process found none, later passes need not look again. A new process looks
// once more.
func (s steps) upstreamAdminsLeft(rt *infrav1.Runtime) bool {
	if s.upstreamAdminsGone == nil {
		return true
	}
	uid, ok := s.upstreamAdminsGone.Load(client.ObjectKeyFromObject(rt))
	return !ok || uid != rt.UID
}

// reconcileUpstreamAdministrators deletes upstream's administrator bindings that make nobody in
// want cluster-admin, and removes from want the administrators upstream's bindings stand for. It
// reports whether any of upstream's administrator bindings is left.
func reconcileUpstreamAdministrators(ctx context.Context, c Objects, want map[string]string) (bool, error) {
	upstream := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, upstream, client.MatchingLabelsSelector{Selector: upstreamAdminSelector}); err != nil {
		return true, fmt.Errorf("list upstream's administrator bindings: %w", err)
	}
	left := false
	for i := range upstream.Items {
		b := &upstream.Items[i]
		if !grantsClusterAdmin(b) {
			continue // upstream's, but not an administrator binding: not this step's
		}
		kept := false
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind {
				kept = true
			}
			if s.Kind == rbacv1.UserKind && want[adminBindingName(s.Name)] == s.Name {
				delete(want, adminBindingName(s.Name))
				kept = true
			}
		}
		if kept {
			left = true
			continue
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, b)); err != nil {
			return true, fmt.Errorf("delete upstream's administrator binding %s: %w", b.Name, err)
		}
	}
	return left, nil
}

// grantsClusterAdmin reports whether b binds the cluster-admin ClusterRole.
func grantsClusterAdmin(b *rbacv1.ClusterRoleBinding) bool {
	return b.RoleRef.Kind == "ClusterRole" && b.RoleRef.Name == "cluster-admin"
}

// upstreamAdmin returns the user a binding makes cluster-admin; "" when it grants anything
// else or to anyone else than one user.
func upstreamAdmin(b *rbacv1.ClusterRoleBinding) string {
	if !grantsClusterAdmin(b) || len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.UserKind {
		return ""
	}
	return b.Subjects[0].Name
}

// adminBindingName derives a stable, valid name from an administrator's user name.
func adminBindingName(admin string) string {
	sum := sha256.Sum256([]byte(admin))
	return "kyma-admin-" + hex.EncodeToString(sum[:])[:16]
}
