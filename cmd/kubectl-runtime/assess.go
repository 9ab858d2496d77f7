package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// phase is what the engine is doing with a Runtime, as the plugin tells it. It is derived from
// the status alone (phaseOf), so list, status and explain agree.
type phase string

const (
	// phaseNew: the manager has not written a status yet.
	phaseNew phase = "New"
	// phaseProgressing: a step runs and moves on by itself.
	phaseProgressing phase = "Progressing"
	// phaseWaiting: a step waits for an external process (Gardener, a Secret) until its deadline.
	phaseWaiting phase = "Waiting"
	// phaseRetrying: a step failed and runs again at the next retry time.
	phaseRetrying phase = "Retrying"
	// phasePaused: a step waits for Gardener to be back, spending no attempt.
	phasePaused phase = "Paused"
	// phaseFailed: retries ended; the Runtime is probed hourly and alerts fire.
	phaseFailed phase = "Failed"
	// phaseDeleting: the deletion steps run.
	phaseDeleting phase = "Deleting"
	// phaseReady: every step succeeded.
	phaseReady phase = "Ready"
)

// phaseOf derives the phase from the status the engine wrote.
func phaseOf(rt *infrav1.Runtime) phase {
	st := rt.Status.EngineStatus
	r := st.Retry
	ready := meta.FindStatusCondition(st.Conditions, infrav1.ConditionReady)
	switch {
	case st.Step == nil:
		return phaseNew
	case st.State == infrav1.StateFailed:
		return phaseFailed
	case r != nil && r.PausedAt != nil:
		return phasePaused
	case r != nil && r.NextRetryAt != nil:
		return phaseRetrying
	case st.State == infrav1.StateTerminating || !rt.DeletionTimestamp.IsZero():
		return phaseDeleting
	case st.State == infrav1.StateReady:
		return phaseReady
	case ready != nil && ready.Reason == fsm.ReasonWaiting:
		return phaseWaiting
	default:
		return phaseProgressing
	}
}

// stepDoes says in a few words what each step of the Runtime controller does. A test checks
// that every step of the machine has an entry.
var stepDoes = map[string]string{
	runtimectrl.StepInitialise:            "checks the Runtime and claims its runtime id",
	runtimectrl.StepApplyAuthentication:   "writes the shoot's structured authentication ConfigMap to the Gardener project",
	runtimectrl.StepApplyShoot:            "creates or updates the shoot in Gardener",
	runtimectrl.StepWaitForShoot:          "waits for Gardener to finish creating or reconciling the shoot",
	runtimectrl.StepEnsureGardenerCluster: "creates the GardenerCluster that asks for the admin kubeconfig",
	runtimectrl.StepWaitForKubeconfig:     "waits for the admin kubeconfig Secret",
	runtimectrl.StepConfigureOIDC:         "configures the OIDC providers in the runtime cluster",
	runtimectrl.StepConfigureCluster:      "binds the administrators and creates kyma-system and the provisioning info in the runtime cluster",
	runtimectrl.StepDeleteGardenerCluster: "deletes the GardenerCluster and the kubeconfig Secret",
	runtimectrl.StepDeleteShoot:           "asks Gardener to delete the shoot",
	runtimectrl.StepWaitForShootDeletion:  "waits for Gardener to finish deleting the shoot",
	runtimectrl.StepDeleteAuthentication:  "deletes the structured authentication ConfigMap",
	runtimectrl.StepRemoveFinalizer:       "removes the finalizer, so that the Runtime goes",
	fsm.StepDone:                          "has nothing left to do",
}

// describeStep returns "STEP (what it does)".
func describeStep(name string) string {
	if d, ok := stepDoes[name]; ok {
		return fmt.Sprintf("%s (%s)", name, d)
	}
	return name
}

// alertFor names the shipped alert that fires for a Failed Runtime, as the rules in
// config/prometheus/rules.yaml select it: by the class of the last error.
func alertFor(r *infrav1.RetryStatus) string {
	switch retry.Class(r.Class) {
	case retry.ClassTerminal:
		return "RuntimeFailedUserError"
	case retry.ClassTransient, retry.ClassThrottled, retry.ClassConflict:
		return "RuntimeRetriesExhausted"
	default:
		return "RuntimeStuck"
	}
}

// waitsFor is what a waiting step waits for, from its Ready condition ("Step X waits: WHY").
func waitsFor(rt *infrav1.Runtime) string {
	ready := meta.FindStatusCondition(rt.Status.Conditions, infrav1.ConditionReady)
	if ready == nil {
		return ""
	}
	if _, why, ok := strings.Cut(ready.Message, " waits: "); ok {
		return why
	}
	return ""
}

// since says how long ago t was: "5m ago".
func since(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "-"
	}
	if d := now.Sub(t.Time); d > 0 {
		return duration.HumanDuration(d) + " ago"
	}
	return "just now"
}

// until says how far ahead t is: "in 2m", or "due" once it has passed.
func until(now time.Time, t *metav1.Time) string {
	if t == nil {
		return "-"
	}
	if d := t.Sub(now); d > 0 {
		return "in " + duration.HumanDuration(d)
	}
	return "due now"
}

// age is kubectl's AGE column.
func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// eventTime is when an Event was last seen.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.DeprecatedLastTimestamp.Time
	}
}

// eventCount is how often an Event was seen.
func eventCount(e eventsv1.Event) int32 {
	switch {
	case e.Series != nil:
		return e.Series.Count
	case e.DeprecatedCount > 0:
		return e.DeprecatedCount
	default:
		return 1
	}
}

// sortEvents orders events oldest first, by name where they tie.
func sortEvents(events []eventsv1.Event) {
	slices.SortStableFunc(events, func(a, b eventsv1.Event) int {
		if c := eventTime(a).Compare(eventTime(b)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
