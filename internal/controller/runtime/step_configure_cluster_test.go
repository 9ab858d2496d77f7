package runtime

import (
	"maps"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm/fsmtest"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// adminBinding returns a binding that makes admin cluster-admin, with labels.
func adminBinding(name, admin string, labels map[string]string) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: admin}},
	}
	b.Name, b.Labels = name, labels
	return b
}

// clusterAdmins maps the runtime cluster's ClusterRoleBindings to the user they bind.
func clusterAdmins(t *testing.T, w *world) map[string]string {
	t.Helper()
	list := &rbacv1.ClusterRoleBindingList{}
	if err := w.runtime.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range list.Items {
		out[b.Name] = upstreamAdmin(&b)
	}
	return out
}

// TestConfigureCluster covers the preparation of the runtime cluster: the kyma-system namespace,
// one cluster-admin binding per administrator, managed or upstream's, and the provisioning info.
func TestConfigureCluster(t *testing.T) {
	// The administrator of upstream's AWS example, and one the case may add.
	const admin, second = "admin@myorg.com", "second@myorg.com"
	managedBy := map[string]string{LabelManagedBy: FieldOwner}
	// upstream labels its bindings with the reconciler label alone; the provisioner before it
	// used the value reconciler, and upstream manages those too.
	upstream := map[string]string{LabelUpstreamReconcilerManagedBy: upstreamManager}
	provisioner := map[string]string{LabelUpstreamReconcilerManagedBy: "reconciler"}
	tests := []struct {
		name string
		// reason says why the case exists.
		reason string
		// admins replace the Runtime's administrators when set.
		admins []string
		// existing are the bindings in the runtime cluster before the step.
		existing []client.Object
		// again runs the step once before the run under test.
		again    bool
		noSecret bool
		faults   []fault
		want     fsmtest.Result
		// bindings are the runtime cluster's bindings afterwards: name to the user it makes
		// cluster-admin.
		bindings map[string]string
	}{
		{
			name:     "prepares the cluster with one binding per administrator and completes provisioning",
			reason:   "each administrator gets cluster-admin, and the Runtime is provisioned only then",
			admins:   []string{admin, second},
			want:     fsmtest.Done(),
			bindings: map[string]string{adminBindingName(admin): admin, adminBindingName(second): second},
		},
		{
			name:     "a second run finds everything in place and writes nothing",
			reason:   "periodic re-checks must not write to the runtime cluster",
			again:    true,
			want:     fsmtest.Done(),
			bindings: map[string]string{adminBindingName(admin): admin},
		},
		{
			name:   "a managed binding of an administrator no longer listed goes, one without the label stays",
			reason: "a removed administrator loses access, and bindings made by others are not ours to delete",
			existing: []client.Object{
				adminBinding(adminBindingName(second), second, managedBy),
				adminBinding("made-by-someone-else", "someone@myorg.com", nil),
			},
			want:     fsmtest.Done(),
			bindings: map[string]string{adminBindingName(admin): admin, "made-by-someone-else": "someone@myorg.com"},
		},
		{
			name:     "upstream's binding of a listed administrator stands for it",
			reason:   "an adoption must not add a second binding for the same administrator",
			existing: []client.Object{adminBinding("upstream-admin", admin, upstream)},
			want:     fsmtest.Done(),
			bindings: map[string]string{"upstream-admin": admin},
		},
		{
			name:     "upstream's binding of an administrator no longer listed goes",
			reason:   "upstream's bindings are managed like our own once adopted",
			existing: []client.Object{adminBinding("upstream-admin", second, upstream)},
			want:     fsmtest.Done(),
			bindings: map[string]string{adminBindingName(admin): admin},
		},
		{
			name:   "upstream's bindings as upstream labels them: the listed administrator keeps one, the removed one loses it",
			reason: "upstream names its bindings at random, so only label and subject tell whose they are",
			existing: []client.Object{
				adminBinding("admin-x7k2p", admin, upstream),
				adminBinding("admin-q9w4z", second, upstream),
			},
			want:     fsmtest.Done(),
			bindings: map[string]string{"admin-x7k2p": admin},
		},
		{
			name:   "the provisioner's bindings are upstream's too",
			reason: "clusters from before upstream carry the provisioner's label value",
			existing: []client.Object{
				adminBinding("admin-old1", admin, provisioner),
				adminBinding("admin-old2", second, provisioner),
			},
			want:     fsmtest.Done(),
			bindings: map[string]string{"admin-old1": admin},
		},
		{
			name:   "an upstream binding of another role, or of a ServiceAccount, stays",
			reason: "only cluster-admin bindings of users are administrator bindings",
			existing: []client.Object{
				func() client.Object {
					b := adminBinding("admin-view", second, upstream)
					b.RoleRef.Name = "view"
					return b
				}(),
				func() client.Object {
					b := adminBinding("admin-sa", second, upstream)
					b.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "ops", Namespace: "kube-system"}}
					return b
				}(),
			},
			want:     fsmtest.Done(),
			bindings: map[string]string{adminBindingName(admin): admin, "admin-view": "", "admin-sa": ""},
		},
		{
			name:     "a failed create fails",
			reason:   "a missing binding leaves an administrator locked out, so the step must not complete",
			faults:   []fault{{store: "runtime", verb: "create", kind: "ClusterRoleBinding", err: unavailable()}},
			want:     fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			bindings: map[string]string{},
		},
		{
			name:     "a namespace that cannot be created fails",
			reason:   "the namespace comes first; without it nothing else is written",
			faults:   []fault{{store: "runtime", verb: "create", kind: "Namespace", err: unavailable()}},
			want:     fsmtest.Plain(retry.ClassTransient, retry.ReasonServiceUnavailable),
			bindings: map[string]string{},
		},
		{
			name:     "a runtime without kubeconfig Secret fails",
			reason:   "a missing Secret may still be on its way, so the failure is retried",
			noSecret: true,
			want:     fsmtest.Plain(retry.ClassTransient, retry.ReasonNotFound),
			bindings: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsmtest.Because(t, tt.reason)
			rt := newTestRuntime(t, "rt")
			if tt.admins != nil {
				rt.Spec.Security.Administrators = tt.admins
			}
			var objs []client.Object
			if !tt.noSecret {
				objs = append(objs, reachable(rt))
			}
			w := newWorld(t, objs...)
			for _, o := range tt.existing {
				w.create(w.runtime, o)
			}
			if tt.again {
				if out := w.steps.configureCluster(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Done()) {
					t.Fatal("first run")
				}
				w.resetCalls()
			}
			w.fail(tt.faults...)

			out := w.steps.configureCluster(t.Context(), rt)

			fsmtest.Check(t, out, tt.want)
			if tt.again {
				checkWrites(t, w, "runtime")
			}
			w.heal()
			if got := clusterAdmins(t, w); !maps.Equal(got, tt.bindings) {
				t.Errorf("cluster-admin bindings %v, want %v", got, tt.bindings)
			}
			done := out.Err() == nil
			if rt.Status.ProvisioningCompleted != done || conditionTrue(rt, infrav1.ConditionConfigured) != done {
				t.Errorf("provisioning completed %t, %s true %t, want both %t",
					rt.Status.ProvisioningCompleted, infrav1.ConditionConfigured, conditionTrue(rt, infrav1.ConditionConfigured), done)
			}
			if !done {
				return
			}
			ns := &corev1.Namespace{}
			ns.Name = KymaNamespace
			w.get(w.runtime, ns)
			checkProvisioningInfo(t, w, rt)
		})
	}
}

// checkProvisioningInfo fails the test unless the runtime cluster holds rt's
// kyma-provisioning-info, naming its region and its worker pool.
func checkProvisioningInfo(t *testing.T, w *world, rt *infrav1.Runtime) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = ProvisioningInfoName, KymaNamespace
	w.get(w.runtime, cm)
	if cm.Labels[LabelManagedBy] != FieldOwner {
		t.Errorf("%s labels %v, want %s=%s", ProvisioningInfoName, cm.Labels, LabelManagedBy, FieldOwner)
	}
	var details provisioningDetails
	if err := yaml.UnmarshalStrict([]byte(cm.Data["details"]), &details); err != nil {
		t.Fatalf("details of %s: %v", ProvisioningInfoName, err)
	}
	pool := rt.Spec.Shoot.Provider.Workers[0]
	want := workerPool{Name: pool.Name, MachineType: pool.Machine.Type, HAZones: true, AutoScalerMin: pool.Minimum, AutoScalerMax: pool.Maximum}
	if details.Region != rt.Spec.Shoot.Region || details.WorkerPools.Kyma != want {
		t.Errorf("details name region %q and pool %+v, want %q and %+v", details.Region, details.WorkerPools.Kyma, rt.Spec.Shoot.Region, want)
	}
	if !strings.Contains(cm.Data["details"], "region: "+rt.Spec.Shoot.Region) {
		t.Errorf("details %q do not name the region as upstream does", cm.Data["details"])
	}
}

// TestUpstreamBindingsAreReadUntilGone: upstream's administrator bindings are read on every pass
// while one stands for a listed administrator, and no more once none is left; a new process
// reads them once again.
func TestUpstreamBindingsAreReadUntilGone(t *testing.T) {
	const admin = "admin@myorg.com"
	rt := newTestRuntime(t, "rt")
	w := newWorld(t, reachable(rt))
	w.steps.upstreamAdminsGone = &sync.Map{}
	standing := adminBinding("admin-x7k2p", admin, map[string]string{LabelUpstreamReconcilerManagedBy: upstreamManager})
	w.create(w.runtime, standing)
	// lists runs the step once and counts its lists of bindings.
	lists := func(s steps) int {
		t.Helper()
		w.resetCalls()
		if out := s.configureCluster(t.Context(), rt.DeepCopy()); !fsmtest.Check(t, out, fsmtest.Done()) {
			t.Fatal("configure cluster")
		}
		return w.reads("runtime", "ClusterRoleBinding")
	}
	for pass, want := range []int{2, 2} {
		if got := lists(w.steps); got != want {
			t.Errorf("pass %d with upstream's binding standing listed bindings %d times, want %d", pass, got, want)
		}
	}
	if err := w.runtime.Delete(t.Context(), standing); err != nil {
		t.Fatal(err)
	}
	if got := lists(w.steps); got != 2 {
		t.Errorf("the pass after upstream's binding went listed bindings %d times, want 2: it must find it gone", got)
	}
	if got := clusterAdmins(t, w); got[adminBindingName(admin)] != admin {
		t.Errorf("bindings %v after upstream's went: the administrator has no binding of its own", got)
	}
	if got := lists(w.steps); got != 1 {
		t.Errorf("a pass after upstream's bindings were found gone listed bindings %d times, want 1", got)
	}
	restarted := w.steps
	restarted.upstreamAdminsGone = &sync.Map{}
	if got := lists(restarted); got != 2 {
		t.Errorf("the first pass of a new process listed bindings %d times, want 2", got)
	}
}
