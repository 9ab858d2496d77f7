package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

type retryOptions struct {
	timeout  time.Duration
	wait     bool
	interval time.Duration
}

func (r *root) retryCommand() *cobra.Command {
	o := &retryOptions{interval: time.Second}
	cmd := &cobra.Command{
		Use:   "retry NAME [--timeout 1m] [--wait=false]",
		Short: "Retry a Runtime's step now with a fresh retry budget, and wait until the manager took the request in",
		Long: "Sets the manual-retry annotation " + infrav1.RetryRequestedAtAnnotation + " to the current time and waits\n" +
			"until status.retryRequestedAt echoes it. The manager then resets the retry budget of the current step and runs it\n" +
			"at once; a Ready Runtime is checked again from its first step.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.retry(cmd.Context(), args[0], o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", time.Minute, "how long to wait for the manager to take the request in")
	cmd.Flags().BoolVar(&o.wait, "wait", true, "wait until the manager took the request in")
	return cmd
}

func (r *root) retry(ctx context.Context, name string, o *retryOptions) error {
	c, err := r.connect()
	if err != nil {
		return err
	}
	rt, err := c.runtime(ctx, name)
	if err != nil {
		return err
	}
	before := phaseOf(rt)
	value := r.now().UTC().Format(time.RFC3339Nano)
	patch := client.MergeFrom(rt.DeepCopy())
	if rt.Annotations == nil {
		rt.Annotations = map[string]string{}
	}
	rt.Annotations[infrav1.RetryRequestedAtAnnotation] = value
	if err := c.client.Patch(ctx, rt, patch); err != nil {
		return fmt.Errorf("annotate runtime %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	fmt.Fprintf(r.stdout, "Runtime %s/%s: retry requested (%s=%s); it was %s.\n", rt.Namespace, rt.Name, infrav1.RetryRequestedAtAnnotation, value, before)
	if before == phaseReady || before == phaseProgressing || before == phaseWaiting {
		fmt.Fprintln(r.stdout, "No step is failing: the manager checks the Runtime again from its first step (a Ready one) or carries on.")
	}
	if !o.wait {
		return nil
	}
	seen, err := c.waitForEcho(ctx, name, value, o)
	if err != nil {
		return err
	}
	st := seen.Status.EngineStatus
	step := "-"
	if st.Step != nil {
		step = st.Step.Name
	}
	fmt.Fprintf(r.stdout, "The manager took it in: the Runtime is %s (%s) in step %s.\n", st.State, phaseOf(seen), step)
	if rec := st.Retry; rec != nil {
		fmt.Fprintf(r.stdout, "The step ran again and failed: attempt %d of %d, %s: %s.\n", rec.Attempt, rec.Limit, rec.Reason, rec.Message)
	}
	return nil
}

// waitForEcho polls the Runtime until its status echoes the retry request, for at most the
// timeout (of the wall clock: the plugin's clock only tells the time it prints).
func (c *cluster) waitForEcho(ctx context.Context, name, value string, o *retryOptions) (*infrav1.Runtime, error) {
	deadline := time.Now().Add(o.timeout)
	for {
		rt, err := c.runtime(ctx, name)
		if err != nil {
			return nil, err
		}
		if rt.Status.RetryRequestedAt == value {
			return rt, nil
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("the manager did not take the retry in within %s: is it running? (kubectl get pods -n kcp-system -l app.kubernetes.io/name=infrastructure-manager); "+
				"the annotation stays, and the manager acts on it when it runs", o.timeout)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the manager: %w", ctx.Err())
		case <-time.After(min(o.interval, time.Until(deadline))):
		}
	}
}
