package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// TestHandback gives the Runtimes of a namespace back to upstream's manager: refused while this
// manager's lease is held and fresh; then each Runtime of this manager gets upstream's finalizer
// in its place, one that already is upstream's is left as it is, and one being deleted is named
// and left, which fails the command. --dry-run writes nothing.
func TestHandback(t *testing.T) {
	ctx := t.Context()
	const hns = "handback"
	if err := env.CreateNamespace(ctx, hns); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, finalizer string, deleting bool) {
		t.Helper()
		rt, err := baseRuntime(name)
		if err != nil {
			t.Fatal(err)
		}
		rt.Namespace, rt.Finalizers = hns, []string{finalizer}
		if err := env.Client.Create(ctx, rt); err != nil {
			t.Fatal(err)
		}
		if deleting {
			if err := env.Client.Delete(ctx, rt); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("ours-a", runtimectrl.Finalizer, false)
	mk("ours-b", runtimectrl.Finalizer, false)
	mk("upstreams", runtimectrl.UpstreamFinalizer, false)
	mk("deleting", runtimectrl.Finalizer, true)
	t.Cleanup(func() {
		for _, name := range []string{"ours-a", "ours-b", "upstreams", "deleting"} {
			rt := &infrav1.Runtime{}
			if err := env.Client.Get(context.WithoutCancel(ctx), client.ObjectKey{Namespace: hns, Name: name}, rt); err == nil {
				rt.Finalizers = nil
				_ = env.Client.Update(context.WithoutCancel(ctx), rt)
				_ = env.Client.Delete(context.WithoutCancel(ctx), rt)
			}
		}
	})
	finalizers := func() map[string][]string {
		t.Helper()
		list := &infrav1.RuntimeList{}
		if err := env.Client.List(ctx, list, client.InNamespace(hns)); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, rt := range list.Items {
			out[rt.Name] = rt.Finalizers
		}
		return out
	}
	before := finalizers()

	// A replica of this manager renewed its lease at t0, the plugin's now.
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: hns, Name: manager.LeaderElectionID},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("im-0_abc"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: ptr.To(metav1.NewMicroTime(t0.Add(-5 * time.Second))),
		},
	}
	if err := env.Client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	_, _, err := plugin(t, "handback", "--all", "-n", hns)
	if err == nil || !strings.Contains(err.Error(), "this manager still leads") || !strings.Contains(err.Error(), "im-0_abc") {
		t.Errorf("handback while the manager leads: %v, want a refusal naming the holder", err)
	}
	if _, _, err := plugin(t, "handback", "-n", hns); err == nil {
		t.Error("handback without names or --all: no error")
	}

	// The lease expired: the manager was scaled to zero without releasing it.
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(t0.Add(-time.Minute)))
	if err := env.Client.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	out, _, err := plugin(t, "handback", "--all", "--dry-run", "-n", hns)
	if err == nil || !strings.Contains(out, "2 would hand back, 1 unchanged, 1 left") {
		t.Errorf("dry run: %v\n%s", err, out)
	}
	if got := finalizers(); !maps.EqualFunc(got, before, slices.Equal) {
		t.Errorf("the dry run changed finalizers: %v, were %v", got, before)
	}

	out, _, err = plugin(t, "handback", "--all", "-n", hns)
	if err == nil || !strings.Contains(err.Error(), "1 Runtimes not handed back: [deleting]") {
		t.Errorf("handback: %v, want it to fail naming the Runtime being deleted", err)
	}
	for _, line := range []string{
		"deleting: left, it is being deleted",
		"ours-a: handed back",
		"ours-b: handed back",
		"upstreams: unchanged",
		"2 handed back, 1 unchanged, 1 left",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	want := map[string][]string{
		"ours-a":    {runtimectrl.UpstreamFinalizer},
		"ours-b":    {runtimectrl.UpstreamFinalizer},
		"upstreams": {runtimectrl.UpstreamFinalizer},
		"deleting":  {runtimectrl.Finalizer},
	}
	if got := finalizers(); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("finalizers after the handback: %v, want %v", got, want)
	}

	// By name, on a Runtime already handed back: nothing to do, no failure.
	out, _, err = plugin(t, "handback", "ours-a", "-n", hns)
	if err != nil || !strings.Contains(out, "0 handed back, 1 unchanged, 0 left") {
		t.Errorf("handback of a handed-back Runtime: %v\n%s", err, out)
	}
}
