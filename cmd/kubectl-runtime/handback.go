package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

type handbackOptions struct {
	all    bool
	dryRun bool
}

func (r *root) handbackCommand() *cobra.Command {
	o := &handbackOptions{}
	cmd := &cobra.Command{
		Use:   "handback (--all | NAME...) [--dry-run]",
		Short: "Give Runtimes back to upstream's manager: its finalizer in place of this manager's",
		Long: "Gives Runtimes back to upstream Kyma Infrastructure Manager, for a rollback. Each Runtime gets upstream's\n" +
			"finalizer " + runtimectrl.UpstreamFinalizer + " in place of this manager's\n" +
			runtimectrl.Finalizer + ", in one write, so it is never without one. That finalizer is\n" +
			"all this manager leaves on a Runtime that would block upstream or a deletion.\n\n" +
			"It refuses while a replica of this manager leads (its lease " + manager.LeaderElectionID + " is held\n" +
			"and renewed): a running manager would take the Runtimes back. A Runtime being deleted cannot take a new\n" +
			"finalizer; it is named and left to this manager. The command fails when any Runtime was not handed back.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.all == (len(args) > 0) {
				return errors.New("name the Runtimes, or pass --all for every Runtime of the namespace")
			}
			return r.handback(cmd.Context(), args, o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "every Runtime of the namespace")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would change, change nothing")
	return cmd
}

func (r *root) handback(ctx context.Context, names []string, o *handbackOptions) error {
	c, err := r.connect()
	if err != nil {
		return err
	}
	if err := c.managerStopped(ctx, r.now()); err != nil {
		return err
	}
	runtimes, err := c.runtimesNamed(ctx, names)
	if err != nil {
		return err
	}
	verb := "handed back"
	if o.dryRun {
		verb = "would hand back"
	}
	var handed, already int
	var left []string
	for _, rt := range runtimes {
		switch {
		case !controllerutil.ContainsFinalizer(rt, runtimectrl.Finalizer):
			already++
			fmt.Fprintf(r.stdout, "%s: unchanged, it has no finalizer of this manager\n", rt.Name)
		case rt.DeletionTimestamp != nil:
			left = append(left, rt.Name)
			fmt.Fprintf(r.stdout, "%s: left, it is being deleted and cannot take upstream's finalizer; this manager's finishes the deletion once it runs again, or remove %s by hand once its shoot is gone\n", rt.Name, runtimectrl.Finalizer)
		default:
			if !o.dryRun {
				if err := c.handBack(ctx, rt); err != nil {
					return err
				}
			}
			handed++
			fmt.Fprintf(r.stdout, "%s: %s, finalizer %s in place of %s\n", rt.Name, verb, runtimectrl.UpstreamFinalizer, runtimectrl.Finalizer)
		}
	}
	fmt.Fprintf(r.stdout, "%d %s, %d unchanged, %d left\n", handed, verb, already, len(left))
	if len(left) > 0 {
		return fmt.Errorf("%d Runtimes not handed back: %v", len(left), left)
	}
	return nil
}

// managerStopped fails while a replica of this manager leads in the namespace: its lease is
// held and was renewed within its duration.
func (c *cluster) managerStopped(ctx context.Context, now time.Time) error {
	lease := &coordinationv1.Lease{}
	err := c.client.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: manager.LeaderElectionID}, lease)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read this manager's lease %s/%s to check that it is stopped: %w", c.namespace, manager.LeaderElectionID, err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" || lease.Spec.RenewTime == nil {
		return nil
	}
	expires := lease.Spec.RenewTime.Add(time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second)
	if now.Before(expires) {
		return fmt.Errorf("this manager still leads: lease %s/%s is held by %s, renewed at %s; scale its Deployment to zero first, or it takes the Runtimes back",
			c.namespace, manager.LeaderElectionID, holder, lease.Spec.RenewTime.UTC().Format(time.RFC3339))
	}
	return nil
}

// runtimesNamed reads the Runtimes names, or every Runtime of the namespace when names is
// empty, sorted by name.
func (c *cluster) runtimesNamed(ctx context.Context, names []string) ([]*infrav1.Runtime, error) {
	var out []*infrav1.Runtime
	if len(names) == 0 {
		list := &infrav1.RuntimeList{}
		if err := c.client.List(ctx, list, client.InNamespace(c.namespace)); err != nil {
			return nil, fmt.Errorf("list runtimes in %s: %w", c.namespace, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	for _, name := range names {
		rt, err := c.runtime(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, rt)
	}
	slices.SortFunc(out, func(a, b *infrav1.Runtime) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// handBack puts upstream's finalizer in place of this manager's on rt, in one write that fails
// when the Runtime changed since it was read.
func (c *cluster) handBack(ctx context.Context, rt *infrav1.Runtime) error {
	patch := client.MergeFromWithOptions(rt.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(rt, runtimectrl.Finalizer)
	controllerutil.AddFinalizer(rt, runtimectrl.UpstreamFinalizer)
	if err := c.client.Patch(ctx, rt, patch); err != nil {
		return fmt.Errorf("hand back runtime %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	return nil
}
