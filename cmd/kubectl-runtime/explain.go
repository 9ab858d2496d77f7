package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

func (r *root) explainCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "explain NAME",
		Short: "Say in plain words what a Runtime waits for, what happens next and when, and what you can do",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.connect()
			if err != nil {
				return err
			}
			rt, err := c.runtime(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			gc, err := c.gardenerCluster(cmd.Context(), rt)
			if err != nil {
				return err
			}
			e := explain(rt, gc, r.now())
			fmt.Fprintf(r.stdout, "Runtime %s/%s is %s.\n\nNow:  %s\nNext: %s\nYou:  %s\n", rt.Namespace, rt.Name, e.headline, e.now, e.next, e.you)
			return nil
		},
	}
}

// explanation answers the three questions of someone looking at a Runtime.
type explanation struct {
	// headline is the phase in a few words.
	headline string
	// now is what the Runtime waits for, or what went wrong.
	now string
	// next is what the manager does next, and when.
	next string
	// you is what a person can do.
	you string
}

// explain derives the explanation from the status alone; the GardenerCluster adds what the
// kubeconfig needs.
func explain(rt *infrav1.Runtime, gc *infrav1.GardenerCluster, now time.Time) explanation {
	st := rt.Status.EngineStatus
	retryCmd := fmt.Sprintf("kubectl runtime retry %s -n %s", rt.Name, rt.Namespace)
	statusCmd := fmt.Sprintf("kubectl runtime status %s -n %s", rt.Name, rt.Namespace)
	switch phaseOf(rt) {
	case phaseNew:
		return explanation{
			headline: "new: the manager has not picked it up",
			now:      "The Runtime has no status yet: no manager has worked on it.",
			next:     "A running manager starts it with step " + describeStep("Initialise") + " within seconds of seeing it.",
			you:      "If it stays like this, check that the manager runs: kubectl get pods -n kcp-system -l app.kubernetes.io/name=infrastructure-manager, and read its log.",
		}
	case phaseProgressing:
		return explanation{
			headline: "in progress",
			now:      fmt.Sprintf("Step %s, entered %s.", describeStep(st.Step.Name), since(now, st.Step.EnteredAt)),
			next:     "The manager moves on to the next step by itself.",
			you:      "Nothing is needed. Follow it with " + statusCmd + ".",
		}
	case phaseWaiting:
		return explainWaiting(rt, now, statusCmd)
	case phaseRetrying:
		return explainRetrying(rt, now, retryCmd)
	case phasePaused:
		rec := st.Retry
		return explanation{
			headline: "paused: Gardener is unavailable",
			now: fmt.Sprintf("Step %s has been paused for %s: Gardener does not answer (the manager's circuit breaker is open), so the step spends no attempt (%d of %d used).",
				describeStep(rec.Step), age(now, *rec.PausedAt), rec.Attempt, rec.Limit),
			next: "It runs again by itself once Gardener answers, released with the other paused Runtimes over the release window; the pause counts against neither its budget nor its deadline.",
			you:  "Nothing for this Runtime: the outage is one incident, the alert GardenerUnavailable (runbook docs/runbooks/GardenerUnavailable.md).",
		}
	case phaseFailed:
		return explainFailed(rt, now, retryCmd, statusCmd)
	case phaseDeleting:
		e := explanation{
			headline: "being deleted",
			now:      fmt.Sprintf("Step %s, entered %s.", describeStep(st.Step.Name), since(now, st.Step.EnteredAt)),
			next:     "The manager deletes the GardenerCluster, the shoot and its authentication ConfigMap, then removes its finalizer and the Runtime is gone.",
			you:      "Nothing is needed: the Runtime stays until its shoot is gone. Follow it with " + statusCmd + ".",
		}
		if why := waitsFor(rt); why != "" {
			e.now += " It waits: " + why + "."
		}
		if d := st.Step.Deadline; d != nil && d.After(now) {
			e.next += fmt.Sprintf(" If the step is still waiting at its deadline, %s (%s), the Runtime goes Failed with StepTimedOut and RuntimeStuck pages on-call.", until(now, d), stamp(d))
		}
		return e
	default:
		return explainReady(rt, gc, now, retryCmd)
	}
}

func explainWaiting(rt *infrav1.Runtime, now time.Time, statusCmd string) explanation {
	st := rt.Status.EngineStatus
	what := waitsFor(rt)
	if what == "" {
		what = "an external process"
	}
	e := explanation{
		headline: "waiting",
		now:      fmt.Sprintf("Step %s waits: %s. It entered the step %s.", describeStep(st.Step.Name), what, since(now, st.Step.EnteredAt)),
		next:     "It moves on as soon as the wait is over; the shoot and its Secret are watched, so it does not wait for a poll.",
		you:      "Nothing yet. Follow it with " + statusCmd + ", which shows Gardener's last operation.",
	}
	if g := gardenerStatus(rt); g != nil && g.LastOperation != nil {
		op := g.LastOperation
		e.now += fmt.Sprintf(" Gardener's last operation: %s %s at %d%%.", op.Type, op.State, op.Progress)
	}
	if d := st.Step.Deadline; d != nil {
		e.next += fmt.Sprintf(" If it is still waiting at its deadline, %s (%s), the Runtime goes Failed with StepTimedOut and RuntimeStuck pages on-call.", until(now, d), stamp(d))
	}
	return e
}

func explainRetrying(rt *infrav1.Runtime, now time.Time, retryCmd string) explanation {
	st := rt.Status.EngineStatus
	rec := st.Retry
	e := explanation{
		headline: "retrying a failed step",
		now: fmt.Sprintf("Step %s failed %s, last %s, with %s: %s.",
			describeStep(rec.Step), times(rec.Attempt), since(now, rec.LastFailure), classWords(rec), detail(rec)),
		next: fmt.Sprintf("Attempt %d of %d runs %s (%s).", rec.Attempt+1, rec.Limit, until(now, rec.NextRetryAt), stamp(rec.NextRetryAt)),
		you:  "Wait: the manager retries with backoff by itself. If you have removed the cause, retry at once with a fresh budget: " + retryCmd + ".",
	}
	if st.State == infrav1.StateTerminating {
		e.headline = "being deleted, retrying a failed step"
	}
	if rec.Class == string(retry.ClassConflict) {
		e.next += " Write conflicts are retried at once and spend no attempt until they persist."
	} else {
		e.next += fmt.Sprintf(" If every attempt fails, the Runtime goes Failed and %s.", pageOf(rec))
	}
	return e
}

func explainFailed(rt *infrav1.Runtime, now time.Time, retryCmd, statusCmd string) explanation {
	st := rt.Status.EngineStatus
	rec := st.Retry
	if rec == nil {
		return explanation{
			headline: "Failed",
			now:      "The Runtime is Failed but has no retry record: a manager of another version wrote this status.",
			next:     "This manager starts it over when its spec changes or a retry is requested.",
			you:      "Retry it: " + retryCmd + ".",
		}
	}
	probe := fmt.Sprintf("The manager probes step %s once an hour, next %s, and the Runtime recovers by itself, and the alert resolves, when the probe succeeds.", rec.Step, until(now, rec.NextRetryAt))
	switch {
	case rec.Class == string(retry.ClassTerminal):
		return explanation{
			headline: "Failed: it needs a change from a person",
			now: fmt.Sprintf("Step %s hit an error that retrying does not fix, %s: %s. The alert RuntimeFailedUserError (warning, dev team) fires for it.",
				describeStep(rec.Step), rec.Reason, detail(rec)),
			next: probe + " A change of the Runtime's spec starts it over at once.",
			you: "Correct the Runtime's spec, or what it refers to (credentials binding, landscape configuration), as the message says; see docs/runbooks/RuntimeFailedUserError.md. " +
				"After a fix outside the spec, " + retryCmd + ".",
		}
	case rec.Class == string(retry.ClassTimeout):
		return explanation{
			headline: "Failed: a step made no progress before its deadline",
			now: fmt.Sprintf("Step %s waited longer than its deadline: %s. The alert RuntimeStuck (critical, on-call) fires for it.",
				describeStep(rec.Step), rec.Message),
			next: probe,
			you: "Find out why with " + statusCmd + " (Gardener's last operation and errors) and docs/runbooks/RuntimeStuck.md; once it can progress, " +
				retryCmd + " gives the step a fresh deadline.",
		}
	default:
		return explanation{
			headline: "Failed: its retries are exhausted",
			now: fmt.Sprintf("Step %s failed %s, its whole budget of %d, with %s: %s. The alert RuntimeRetriesExhausted (critical, on-call and dev team) fires for it.",
				describeStep(rec.Step), times(rec.Attempt), rec.Limit, classWords(rec), detail(rec)),
			next: probe,
			you:  "Remove the cause (docs/runbooks/RuntimeRetriesExhausted.md says how for each reason), then " + retryCmd + " for a fresh budget.",
		}
	}
}

func explainReady(rt *infrav1.Runtime, gc *infrav1.GardenerCluster, now time.Time, retryCmd string) explanation {
	st := rt.Status.EngineStatus
	e := explanation{
		headline: "Ready",
		now:      "Every step succeeded.",
		next:     "The manager checks it again periodically, and at once when its spec or the landscape's configuration changes; a check writes nothing unless the shoot drifted.",
		you:      "Nothing is needed. To have it checked now: " + retryCmd + ".",
	}
	if c := meta.FindStatusCondition(st.Conditions, infrav1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
		e.now = fmt.Sprintf("Every step succeeded; the Runtime has been Ready for %s.", age(now, c.LastTransitionTime))
	}
	if d := st.Step.Deadline; d != nil {
		e.next = fmt.Sprintf("The manager checks it again %s (%s), and at once when its spec or the landscape's configuration changes.", until(now, d), stamp(d))
	}
	if gc != nil && gc.Status.KubeconfigExpiresAt != nil {
		exp := gc.Status.KubeconfigExpiresAt
		if exp.After(now) {
			e.now += fmt.Sprintf(" Its admin kubeconfig expires %s and is rotated before then.", until(now, exp))
		} else {
			e.now += fmt.Sprintf(" Its admin kubeconfig EXPIRED %s: KubeconfigExpiringSoon fires; see docs/runbooks/KubeconfigExpiringSoon.md.", since(now, *exp))
		}
	}
	return e
}

// classWords says what kind of error the retry record holds.
func classWords(rec *infrav1.RetryStatus) string {
	switch retry.Class(rec.Class) {
	case retry.ClassThrottled:
		return "a throttling reply (" + rec.Reason + "): Gardener asked to slow down"
	case retry.ClassConflict:
		return "a write conflict (" + rec.Reason + ")"
	case retry.ClassTransient:
		return "a transient error, " + rec.Reason
	default:
		return strings.ToLower(rec.Class) + " error " + rec.Reason
	}
}

// pageOf says which alert fires when a step with this record exhausts its retries.
func pageOf(rec *infrav1.RetryStatus) string {
	switch a := alertFor(rec); a {
	case "RuntimeRetriesExhausted":
		return a + " pages on-call and the dev team"
	case "RuntimeFailedUserError":
		return a + " tells the dev team"
	default:
		return a + " pages on-call"
	}
}

// times says "once", "twice" or "N times"; a failure that spent no attempt (a write conflict)
// is "without spending an attempt".
func times(n int32) string {
	switch n {
	case 0:
		return "without spending an attempt"
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// detail is the retry record's message without the reason the engine puts in front of it, which
// the sentence around it names already.
func detail(rec *infrav1.RetryStatus) string {
	return strings.TrimPrefix(rec.Message, rec.Reason+": ")
}
