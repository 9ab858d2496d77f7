package gardener

import (
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// ReasonShootOperationFailed is the reason of a Failed operation whose errors carry no error
// code that Observe knows.
const ReasonShootOperationFailed = "ShootOperationFailed"

// Bounds of what Observe and MirrorStatus copy from a shoot's status.
const (
	// MaxDescriptionLength is the longest description, in runes, that MirrorStatus and an
	// OperationError keep; it matches the Runtime status fields.
	MaxDescriptionLength = 1024
	// MaxMirroredErrors is the most lastErrors entries MirrorStatus copies.
	MaxMirroredErrors = 16
	// MaxMirroredCodes is the most error codes MirrorStatus copies per entry.
	MaxMirroredCodes = 16
	// maxWaitingDetail is the longest Gardener description quoted in Observation.Waiting.
	maxWaitingDetail = 256
)

// codeRule is what a Gardener error code means to the manager.
type codeRule struct {
	// reason is the CamelCase reason of the failure.
	reason string
	// class is retry.ClassTerminal for user and configuration errors, which no retry fixes,
	// and retry.ClassTransient for errors that may pass.
	class retry.Class
}

// codeRules maps every error code of Gardener v1.110 to a reason and a class. User and
// configuration errors are terminal; everything else may pass once the cause (a quota, a rate
// limit, a dependency, a webhook, depleted capacity, stuck resources) is gone, so Gardener is
// asked to retry under the manager's backoff. Gardener v1.110 has no
// ERR_INFRA_INSUFFICIENT_PRIVILEGES code; ERR_INFRA_UNAUTHORIZED covers missing permissions.
var codeRules = map[gardencorev1beta1.ErrorCode]codeRule{
	gardencorev1beta1.ErrorInfraUnauthenticated:          {reason: "InfraUnauthenticated", class: retry.ClassTerminal},
	gardencorev1beta1.ErrorInfraUnauthorized:             {reason: "InfraUnauthorized", class: retry.ClassTerminal},
	gardencorev1beta1.ErrorConfigurationProblem:          {reason: "ConfigurationProblem", class: retry.ClassTerminal},
	gardencorev1beta1.ErrorInfraQuotaExceeded:            {reason: "InfraQuotaExceeded", class: retry.ClassTransient},
	gardencorev1beta1.ErrorInfraRateLimitsExceeded:       {reason: "InfraRateLimitsExceeded", class: retry.ClassTransient},
	gardencorev1beta1.ErrorInfraDependencies:             {reason: "InfraDependencies", class: retry.ClassTransient},
	gardencorev1beta1.ErrorRetryableInfraDependencies:    {reason: "RetryableInfraDependencies", class: retry.ClassTransient},
	gardencorev1beta1.ErrorInfraResourcesDepleted:        {reason: "InfraResourcesDepleted", class: retry.ClassTransient},
	gardencorev1beta1.ErrorCleanupClusterResources:       {reason: "CleanupClusterResources", class: retry.ClassTransient},
	gardencorev1beta1.ErrorRetryableConfigurationProblem: {reason: "RetryableConfigurationProblem", class: retry.ClassTransient},
	gardencorev1beta1.ErrorProblematicWebhook:            {reason: "ProblematicWebhook", class: retry.ClassTransient},
}

// ErrorCodeReason returns the reason and class that Observe gives a Failed operation carrying
// code, and false for a code it does not know (Observe then uses ReasonShootOperationFailed,
// transient).
func ErrorCodeReason(code gardencorev1beta1.ErrorCode) (reason string, class retry.Class, ok bool) {
	rule, ok := codeRules[code]
	return rule.reason, rule.class, ok
}

// Observation is what the manager concludes from a shoot's status. At most one of Done, Err
// and Waiting is set.
type Observation struct {
	// Operation is lastOperation.type ("" when none).
	Operation string
	// State is lastOperation.state ("" when none).
	State string
	// Progress is lastOperation.progress in percent.
	Progress int32
	// Done is true when the last operation for the current generation Succeeded
	// (observedGeneration == generation and state Succeeded).
	Done bool
	// Err is non-nil when the operation for the current generation Failed: a retry-marked error
	// (retry.Terminal for user and configuration errors, retry.Transient otherwise) that wraps
	// an *OperationError.
	Err error
	// NeedsGardenerRetry is true when the operation Failed with a code Gardener does not retry
	// itself but that may pass: the manager should annotate gardener.cloud/operation=retry
	// under its own backoff. Gardener then bumps the generation, so the next Observe waits.
	NeedsGardenerRetry bool
	// Waiting says what the manager waits for, when neither Done nor Err is set.
	Waiting string
}

// OperationError describes a Failed shoot operation. Observe wraps it in a retry marking; use
// errors.As to read the codes.
type OperationError struct {
	// Shoot is the shoot's namespace/name.
	Shoot string
	// Operation is the type of the failed operation, such as Create.
	Operation string
	// Codes are the error codes of all lastErrors entries, in order.
	Codes []gardencorev1beta1.ErrorCode
	// Description is the sanitized description of the error that decided the reason.
	Description string
}

// Error returns "shoot <ns>/<name>: <operation> failed [<codes>]: <description>".
func (e *OperationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "shoot %s: %s failed", e.Shoot, e.Operation)
	if len(e.Codes) > 0 {
		codes := make([]string, len(e.Codes))
		for i, c := range e.Codes {
			codes[i] = string(c)
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(codes, ", "))
	}
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(e.Description)
	}
	return b.String()
}

// Observe decides from a shoot's status what the manager should do. It is pure and reads only
// the shoot's generation and status:
//   - a nil shoot, no lastOperation, observedGeneration < generation, or a state of Processing,
//     Pending, Error (Gardener retries it itself), Aborted or anything unknown: wait;
//   - Succeeded for the current generation: Done;
//   - Failed for the current generation: Err, classified by the error codes in lastErrors
//     (see ErrorCodeReason): the first user or configuration code wins and is terminal;
//     otherwise the first known code, or ReasonShootOperationFailed, is transient and
//     NeedsGardenerRetry is set.
func Observe(shoot *gardencorev1beta1.Shoot) Observation {
	if shoot == nil {
		return Observation{Waiting: "Shoot does not exist yet"}
	}
	op := shoot.Status.LastOperation
	if op == nil {
		return Observation{Waiting: "Waiting for Gardener to start an operation"}
	}
	obs := Observation{Operation: string(op.Type), State: string(op.State), Progress: op.Progress}
	if shoot.Status.ObservedGeneration < shoot.Generation {
		obs.Waiting = fmt.Sprintf("Waiting for Gardener to observe generation %d (observed %d)",
			shoot.Generation, shoot.Status.ObservedGeneration)
		return obs
	}
	switch op.State {
	case gardencorev1beta1.LastOperationStateSucceeded:
		obs.Done = true
	case gardencorev1beta1.LastOperationStateFailed:
		obs.NeedsGardenerRetry, obs.Err = failure(shoot)
	case gardencorev1beta1.LastOperationStateError:
		obs.Waiting = fmt.Sprintf("%s Error, Gardener retries", op.Type)
		if detail := retry.Sanitize(firstDescription(shoot), maxWaitingDetail); detail != "" {
			obs.Waiting += ": " + detail
		}
	default:
		// No progress figure: it lives in the status's shoot operation, and a condition message
		// that changed with it would make every poll a write.
		obs.Waiting = fmt.Sprintf("Gardener operation %s is %s", op.Type, op.State)
	}
	return obs
}

// failure classifies a Failed operation and reports whether Gardener must be asked to retry.
func failure(shoot *gardencorev1beta1.Shoot) (needsRetry bool, err error) {
	reason, class, decisive := classifyCodes(shoot.Status.LastErrors)
	description := shoot.Status.LastOperation.Description
	if decisive >= 0 && shoot.Status.LastErrors[decisive].Description != "" {
		description = shoot.Status.LastErrors[decisive].Description
	}
	opErr := &OperationError{
		Shoot:       shoot.Namespace + "/" + shoot.Name,
		Operation:   string(shoot.Status.LastOperation.Type),
		Codes:       allCodes(shoot.Status.LastErrors),
		Description: retry.Sanitize(description, MaxDescriptionLength),
	}
	if class == retry.ClassTerminal {
		return false, retry.Terminal(reason, opErr)
	}
	return true, retry.Transient(reason, opErr)
}

// classifyCodes returns the reason and class of the decisive code in lastErrors and the index of
// the entry holding it: the first terminal code, else the first known code. Without a known code
// it returns ReasonShootOperationFailed, transient, and the first entry (-1 when there is none).
func classifyCodes(lastErrors []gardencorev1beta1.LastError) (string, retry.Class, int) {
	reason, class, decisive := ReasonShootOperationFailed, retry.ClassTransient, -1
	if len(lastErrors) > 0 {
		decisive = 0
	}
	found := false
	for i, e := range lastErrors {
		for _, code := range e.Codes {
			rule, ok := codeRules[code]
			switch {
			case ok && rule.class == retry.ClassTerminal:
				return rule.reason, rule.class, i
			case ok && !found:
				reason, class, decisive, found = rule.reason, rule.class, i, true
			}
		}
	}
	return reason, class, decisive
}

// allCodes lists the codes of all entries, in order.
func allCodes(lastErrors []gardencorev1beta1.LastError) []gardencorev1beta1.ErrorCode {
	var codes []gardencorev1beta1.ErrorCode
	for _, e := range lastErrors {
		codes = append(codes, e.Codes...)
	}
	return codes
}

// firstDescription is the first non-empty lastErrors description, else the lastOperation's.
func firstDescription(shoot *gardencorev1beta1.Shoot) string {
	for _, e := range shoot.Status.LastErrors {
		if e.Description != "" {
			return e.Description
		}
	}
	if shoot.Status.LastOperation != nil {
		return shoot.Status.LastOperation.Description
	}
	return ""
}

// MirrorStatus copies a shoot's lastOperation and lastErrors for the Runtime status: codes as
// strings, descriptions sanitized (no credentials, one line) and cut to MaxDescriptionLength, at
// most MaxMirroredErrors entries of at most MaxMirroredCodes codes each. It returns nil for a nil
// shoot and for a shoot with neither.
func MirrorStatus(shoot *gardencorev1beta1.Shoot) *infrav1.GardenerStatus {
	if shoot == nil || (shoot.Status.LastOperation == nil && len(shoot.Status.LastErrors) == 0) {
		return nil
	}
	out := &infrav1.GardenerStatus{}
	if op := shoot.Status.LastOperation; op != nil {
		out.LastOperation = &infrav1.LastOperation{
			Type:           string(op.Type),
			State:          string(op.State),
			Progress:       op.Progress,
			Description:    retry.Sanitize(op.Description, MaxDescriptionLength),
			LastUpdateTime: op.LastUpdateTime,
		}
	}
	errs := shoot.Status.LastErrors
	for _, e := range errs[:min(len(errs), MaxMirroredErrors)] {
		mirrored := infrav1.LastError{Description: retry.Sanitize(e.Description, MaxDescriptionLength)}
		for _, code := range e.Codes[:min(len(e.Codes), MaxMirroredCodes)] {
			mirrored.Codes = append(mirrored.Codes, string(code))
		}
		out.LastErrors = append(out.LastErrors, mirrored)
	}
	return out
}
