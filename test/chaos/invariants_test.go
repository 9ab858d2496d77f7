package chaos_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
)

// Where the invariants look, besides the watch's record (recorder_test.go):
//
//   - settled and alerting: the last stored version of each Runtime, and the replicas' /metrics
//     for infrastructure_manager_runtime_failed{runtime_name=...} 1 (only the leader runs the
//     engine, so the series is looked for on every replica);
//   - one shoot: the garden API server itself (not through the proxy), and the request log's
//     answers 201 to writes of a shoot name (a shoot created twice was deleted in between);
//   - early writes: each create, update, patch or delete of a shoot or of its structured-auth
//     ConfigMap in the request log, stamped when it reached the proxy, against the version of
//     its Runtime that the watch had delivered before that moment: if that version carries a
//     retry record whose nextRetryAt is later, the manager acted before the time it had stored.
//     A version is stored before the watch delivers it, so the check can miss an early write but
//     never blames a legitimate one; the one input that restarts a Runtime's machine during a
//     run is its deletion, so writes after the suite asked for a deletion that the watch has
//     not shown yet are left out;
//   - cleanup: the control plane and the garden API server after every Runtime was deleted.

// gardenWriteVerbs are the verbs that change something in the garden.
var gardenWriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// authConfigMapPrefix starts the name of a shoot's structured authentication ConfigMap.
const authConfigMapPrefix = "structured-auth-config-"

// runtimeWrite returns the shoot a request log record writes for a Runtime: a write of the shoot
// itself or of its structured-auth ConfigMap in the project namespace.
func runtimeWrite(r proxy.RequestRecord) (shoot string, ok bool) {
	if r.Namespace != gardenNamespace || r.Subresource != "" || r.Name == "" || !slices.Contains(gardenWriteVerbs, r.Verb) {
		return "", false
	}
	switch {
	case r.Resource == "shoots":
		return r.Name, true
	case r.Resource == "configmaps" && strings.HasPrefix(r.Name, authConfigMapPrefix):
		return strings.TrimPrefix(r.Name, authConfigMapPrefix), true
	}
	return "", false
}

// failureReasons are the Ready condition's reasons of a Failed Runtime.
var failureReasons = []string{infrav1.ReasonRetriesExhausted, infrav1.ReasonUserActionRequired, infrav1.ReasonStepTimedOut}

// checkSettled is the end-state invariant: every Runtime Ready, or Failed with a failure reason
// on its Ready condition and in its retry record, and an infrastructure_manager_runtime_failed
// series for it on a replica. The series is polled for a minute: a newly elected leader sets it
// when it first reconciles the Runtime.
func checkSettled(ctx context.Context, s *suite, rec *recorder, rep *report) {
	var failed []*history
	for _, h := range sortedHistories(rec.snapshot()) {
		rep.count(invSettled)
		o := h.latest()
		switch {
		case o.state == infrav1.StateReady:
		case o.state != infrav1.StateFailed:
			rep.violate(invSettled, h.name, time.Now(), "neither Ready nor Failed at the end: "+describe(o))
		case !slices.Contains(failureReasons, o.readyReason) || o.retry == nil || o.retry.Reason == "":
			rep.violate(invSettled, h.name, time.Now(), fmt.Sprintf("Failed without a reason: Ready condition reason %q, %s", o.readyReason, describe(o)))
		default:
			failed = append(failed, h)
		}
	}
	if len(failed) == 0 {
		return
	}
	missing := map[string]bool{}
	err := poll(ctx, time.Minute, time.Second, func(ctx context.Context) (bool, error) {
		series := map[string]bool{}
		for _, r := range s.replicas {
			samples, err := scrape(ctx, r.metrics)
			if err != nil {
				continue // a replica that is restarting
			}
			for _, sm := range samples["infrastructure_manager_runtime_failed"] {
				if sm.value == 1 {
					series[sm.labels["runtime_name"]] = true
				}
			}
		}
		clear(missing)
		for _, h := range failed {
			if !series[h.name] {
				missing[h.name] = true
			}
		}
		return len(missing) == 0, nil
	})
	if err == nil {
		return
	}
	for _, h := range failed {
		if missing[h.name] {
			rep.violate(invSettled, h.name, time.Now(), fmt.Sprintf(
				"Failed (%s) but no replica's /metrics has infrastructure_manager_runtime_failed{runtime_name=%q} 1 within a minute",
				describe(h.latest()), h.name))
		}
	}
}

// checkShoots is the one-shoot invariant, before the deletion: a Ready Runtime has its shoot, a
// Failed one at most its own, no shoot belongs to no Runtime, and no shoot name was answered
// 201 (created) more than once.
func checkShoots(ctx context.Context, s *suite, rec *recorder, rep *report, records []proxy.RequestRecord) error {
	list := &gardencorev1beta1.ShootList{}
	if err := s.garden.List(ctx, list, client.InNamespace(gardenNamespace)); err != nil {
		return fmt.Errorf("list shoots: %w", err)
	}
	shoots := map[string]int{}
	for _, sh := range list.Items {
		shoots[sh.Name]++
	}
	created := map[string][]time.Time{}
	for _, r := range records {
		if r.Resource == "shoots" && r.Subresource == "" && r.Code == http.StatusCreated && (r.Verb == "create" || r.Verb == "patch" || r.Verb == "update") {
			created[r.Name] = append(created[r.Name], r.Time)
		}
	}
	histories := rec.snapshot()
	for _, h := range sortedHistories(histories) {
		rep.count(invOneShoot)
		o := h.latest()
		n := shoots[h.shoot]
		switch {
		case o.state == infrav1.StateReady && n != 1:
			rep.violate(invOneShoot, h.name, time.Now(), fmt.Sprintf("Ready with %d shoots named %s in %s", n, h.shoot, gardenNamespace))
		case n > 1:
			rep.violate(invOneShoot, h.name, time.Now(), fmt.Sprintf("%d shoots named %s", n, h.shoot))
		}
		if times := created[h.shoot]; len(times) > 1 {
			at := make([]string, 0, len(times))
			for _, t := range times {
				at = append(at, clock(t))
			}
			rep.violate(invOneShoot, h.name, times[1], fmt.Sprintf("shoot %s created %d times (answered 201 at %s)", h.shoot, len(times), strings.Join(at, ", ")))
		}
	}
	known := map[string]bool{}
	for _, h := range histories {
		known[h.shoot] = true
	}
	for name := range shoots {
		if !known[name] {
			rep.violate(invOneShoot, "(none)", time.Now(), fmt.Sprintf("shoot %s belongs to no Runtime", name))
		}
	}
	return nil
}

// checkEarlyWrites is the early-write invariant over the whole request log (see the comment at
// the top of this file). It returns the number of writes correlated with a Runtime.
func checkEarlyWrites(rec *recorder, rep *report, records []proxy.RequestRecord) int {
	histories := rec.snapshot()
	byShoot := map[string]*history{}
	for _, h := range histories {
		byShoot[h.shoot] = h
	}
	writes := 0
	for _, r := range records {
		shoot, ok := runtimeWrite(r)
		if !ok {
			continue
		}
		h := byShoot[shoot]
		if h == nil {
			continue
		}
		writes++
		rep.count(invEarlyWrite)
		o, ok := h.inForce(r.Time)
		if !ok || o.gone || deletionPending(h, o, r.Time) {
			continue
		}
		if o.retry == nil || o.retry.NextRetryAt == nil || !r.Time.Before(o.retry.NextRetryAt.Time) {
			continue
		}
		step := "(none)"
		if o.step != nil {
			step = o.step.Name
		}
		rep.violate(invEarlyWrite, h.name, r.Time, fmt.Sprintf(
			"%s %s/%s (answered %d) %s before the stored nextRetryAt %s: stored version rv %s (seen %s) is in step %s with the retry record of %s, attempt %d/%d, %s %s",
			r.Verb, r.Resource, r.Name, r.Code, o.retry.NextRetryAt.Sub(r.Time).Round(time.Millisecond), clock(o.retry.NextRetryAt.Time),
			o.rv, clock(o.at), step, o.retry.Step, o.retry.Attempt, o.retry.Limit, o.retry.Class, o.retry.Reason))
	}
	return writes
}

// checkOwnWrites is the invariant of a run without faults or kills, where every write is the
// manager's own doing: each status write changes the step or records something new (a retry
// record, what the shoot reports, an input), and before its Runtime's deletion each shoot and
// structured-auth ConfigMap is written at most once.
func checkOwnWrites(rec *recorder, rep *report, records []proxy.RequestRecord) {
	histories := rec.snapshot()
	byShoot := map[string]*history{}
	for _, h := range histories {
		byShoot[h.shoot] = h
		for i := 1; i < len(h.obs); i++ {
			prev, o := h.obs[i-1], h.obs[i]
			if o.gone {
				continue
			}
			rep.count(invOwnWrites)
			if classify(prev, o) == writeOther {
				rep.violate(invOwnWrites, h.name, o.at, fmt.Sprintf(
					"status write rv %s → %s changed neither the step (%s), the retry record, the shoot's mirror nor an input: state %s → %s, Ready %s → %s",
					prev.rv, o.rv, stepName(o), prev.state, o.state, prev.readyReason, o.readyReason))
			}
		}
	}
	written := map[string]int{}
	for _, r := range records {
		shoot, ok := runtimeWrite(r)
		h := byShoot[shoot]
		if !ok || h == nil || (!h.deleteAt.IsZero() && !r.Time.Before(h.deleteAt)) {
			continue
		}
		rep.count(invOwnWrites)
		key := r.Resource + "/" + r.Name
		if written[key]++; written[key] > 1 {
			rep.violate(invOwnWrites, h.name, r.Time, fmt.Sprintf("%s %s (answered %d): write number %d before the deletion", r.Verb, key, r.Code, written[key]))
		}
	}
}

// stepName is the step of an observation, or (none).
func stepName(o observation) string {
	if o.step == nil {
		return "(none)"
	}
	return o.step.Name
}

// runtimeMachine is the Runtime controller's transition table, for its step names.
var runtimeMachine = runtimectrl.NewMachine(runtimectrl.Config{})

// runtimeDeletionSteps are the steps of the Runtime controller's deletion path.
var runtimeDeletionSteps = runtimeMachine.DeletionSteps()

// deletionPending reports whether, at time t, the Runtime's deletion was asked for and the
// version in force does not yet show the manager taking it in: either the watch has not delivered
// the deleting version, or that version still carries the status from before the deletion (the
// manager restarts the machine, runs the first deletion step and only then writes the status).
// The retry record of such a version no longer binds the manager.
func deletionPending(h *history, o observation, t time.Time) bool {
	if !o.deleting {
		return !h.deleteAt.IsZero() && t.After(h.deleteAt)
	}
	return o.step == nil || !runtimeDeletionSteps[o.step.Name]
}

// leftovers lists what remains of the Runtimes: themselves, shoots, GardenerClusters, kubeconfig
// Secrets and structured-auth ConfigMaps.
func leftovers(ctx context.Context, s *suite) ([]string, error) {
	var left []string
	rts := &infrav1.RuntimeList{}
	if err := s.cp.List(ctx, rts, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list runtimes: %w", err)
	}
	for _, rt := range rts.Items {
		left = append(left, fmt.Sprintf("Runtime %s (%s)", rt.Name, describe(observe(&rt, time.Now(), true))))
	}
	gcs := &infrav1.GardenerClusterList{}
	if err := s.cp.List(ctx, gcs, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list GardenerClusters: %w", err)
	}
	for _, gc := range gcs.Items {
		left = append(left, "GardenerCluster "+gc.Name)
	}
	secrets := &corev1.SecretList{}
	if err := s.cp.List(ctx, secrets, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	for _, sec := range secrets.Items {
		if strings.HasPrefix(sec.Name, "kubeconfig-") {
			left = append(left, "Secret "+sec.Name)
		}
	}
	shoots := &gardencorev1beta1.ShootList{}
	if err := s.garden.List(ctx, shoots, client.InNamespace(gardenNamespace)); err != nil {
		return nil, fmt.Errorf("list shoots: %w", err)
	}
	for _, sh := range shoots.Items {
		state := "no operation"
		if op := sh.Status.LastOperation; op != nil {
			state = fmt.Sprintf("%s %s %d%%", op.Type, op.State, op.Progress)
		}
		left = append(left, fmt.Sprintf("Shoot %s (%s)", sh.Name, state))
	}
	cms := &corev1.ConfigMapList{}
	if err := s.garden.List(ctx, cms, client.InNamespace(gardenNamespace)); err != nil {
		return nil, fmt.Errorf("list configmaps: %w", err)
	}
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, authConfigMapPrefix) {
			left = append(left, "ConfigMap "+cm.Name)
		}
	}
	sort.Strings(left)
	return left, nil
}

// checkCleanup is the cleanup invariant: after every Runtime was deleted, nothing of them is left
// once the timeout has passed. Each leftover is a violation, attributed to its Runtime by name.
func checkCleanup(ctx context.Context, s *suite, rec *recorder, rep *report, timeout time.Duration) time.Duration {
	began := time.Now()
	var left []string
	err := poll(ctx, timeout, time.Second, func(ctx context.Context) (bool, error) {
		var err error
		left, err = leftovers(ctx, s)
		return err == nil && len(left) == 0, err
	})
	took := time.Since(began)
	// Every Runtime contributes its Runtime, GardenerCluster, Secret, shoot and ConfigMap.
	rep.countN(invCleanup, 5*len(rec.snapshot()))
	if err == nil {
		return took
	}
	if len(left) == 0 {
		rep.violate(invCleanup, "(all)", time.Now(), fmt.Sprintf("could not list what is left: %v", err))
		return took
	}
	for _, l := range left {
		rep.violate(invCleanup, runtimeOf(l, rec), time.Now(), fmt.Sprintf("%s still there %s after the deletion of every Runtime", l, timeout))
	}
	return took
}

// runtimeOf names the Runtime a leftover belongs to, from the names in it.
func runtimeOf(leftover string, rec *recorder) string {
	for _, h := range sortedHistories(rec.snapshot()) {
		if strings.Contains(leftover, " "+h.name) || strings.Contains(leftover, h.shoot) || strings.Contains(leftover, "kubeconfig-"+h.name) {
			return h.name
		}
	}
	return "(unknown)"
}

// sortedHistories returns the histories by name.
func sortedHistories(m map[string]*history) []*history {
	out := make([]*history, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
