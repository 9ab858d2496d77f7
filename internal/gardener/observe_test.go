package gardener

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// Short names for the operation types and states of the cases.
const (
	opCreate    = gardencorev1beta1.LastOperationTypeCreate
	opReconcile = gardencorev1beta1.LastOperationTypeReconcile
	opDelete    = gardencorev1beta1.LastOperationTypeDelete

	stProcessing = gardencorev1beta1.LastOperationStateProcessing
	stPending    = gardencorev1beta1.LastOperationStatePending
	stSucceeded  = gardencorev1beta1.LastOperationStateSucceeded
	stError      = gardencorev1beta1.LastOperationStateError
	stFailed     = gardencorev1beta1.LastOperationStateFailed
	stAborted    = gardencorev1beta1.LastOperationStateAborted
)

// secretText is a description with a credential that must never leave Observe or MirrorStatus.
const secretText = "request failed:\n  password=hunter2 was rejected"

func TestObserve(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// shoot is the observed shoot.
		shoot *gardencorev1beta1.Shoot
		// wantDone is the expected Done.
		wantDone bool
		// wantWaiting is the expected Waiting; empty when the case expects Done or Err.
		wantWaiting string
		// wantClass is the class of the expected Err; empty when no error is expected.
		wantClass retry.Class
		// wantReason is the reason of the expected Err.
		wantReason string
		// wantRetry is the expected NeedsGardenerRetry.
		wantRetry bool
		// wantCodes are the codes the expected *OperationError carries.
		wantCodes []gardencorev1beta1.ErrorCode
		// wantDescription is the description the expected *OperationError carries.
		wantDescription string
	}{
		{
			name:        "no shoot",
			shoot:       nil,
			wantWaiting: "Shoot does not exist yet",
		},
		{
			name:        "no last operation",
			shoot:       newShoot(1, 0, nil),
			wantWaiting: "Waiting for Gardener to start an operation",
		},
		{
			name:        "create processing",
			shoot:       newShoot(1, 1, op(opCreate, stProcessing, 40, "Waiting for infrastructure")),
			wantWaiting: "Gardener operation Create is Processing",
		},
		{
			name:        "reconcile pending",
			shoot:       newShoot(2, 2, op(opReconcile, stPending, 0, "")),
			wantWaiting: "Gardener operation Reconcile is Pending",
		},
		{
			name:        "aborted waits",
			shoot:       newShoot(2, 2, op(opCreate, stAborted, 10, "")),
			wantWaiting: "Gardener operation Create is Aborted",
		},
		{
			name:     "create succeeded for the current generation",
			shoot:    newShoot(1, 1, op(opCreate, stSucceeded, 100, "Shoot cluster has been successfully reconciled.")),
			wantDone: true,
		},
		{
			name:     "delete succeeded",
			shoot:    newShoot(3, 3, op(opDelete, stSucceeded, 100, "")),
			wantDone: true,
		},
		{
			name:        "succeeded for an older generation waits",
			shoot:       newShoot(3, 2, op(opReconcile, stSucceeded, 100, "")),
			wantWaiting: "Waiting for Gardener to observe generation 3 (observed 2)",
		},
		{
			name: "failed for an older generation waits (a retry was requested)",
			shoot: newShoot(5, 4, op(opReconcile, stFailed, 60, ""),
				lastError("quota", gardencorev1beta1.ErrorInfraQuotaExceeded)),
			wantWaiting: "Waiting for Gardener to observe generation 5 (observed 4)",
		},
		{
			name: "error state waits for Gardener's own retry, with the sanitized first error",
			shoot: newShoot(1, 1, op(opReconcile, stError, 70, "op description"),
				lastError(secretText, gardencorev1beta1.ErrorInfraRateLimitsExceeded),
				lastError("second error")),
			wantWaiting: "Reconcile Error, Gardener retries: request failed: password=[redacted] was rejected",
		},
		{
			name:        "error state without errors quotes the operation",
			shoot:       newShoot(1, 1, op(opCreate, stError, 30, "Flow failed")),
			wantWaiting: "Create Error, Gardener retries: Flow failed",
		},
		{
			name:        "error state without any description",
			shoot:       newShoot(1, 1, op(opCreate, stError, 30, "")),
			wantWaiting: "Create Error, Gardener retries",
		},
		{
			name: "unauthenticated is terminal",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 20, ""),
				lastError("invalid credentials", gardencorev1beta1.ErrorInfraUnauthenticated)),
			wantClass:       retry.ClassTerminal,
			wantReason:      "InfraUnauthenticated",
			wantCodes:       []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraUnauthenticated},
			wantDescription: "invalid credentials",
		},
		{
			name: "unauthorized is terminal",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 20, ""),
				lastError("not allowed", gardencorev1beta1.ErrorInfraUnauthorized)),
			wantClass:       retry.ClassTerminal,
			wantReason:      "InfraUnauthorized",
			wantCodes:       []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraUnauthorized},
			wantDescription: "not allowed",
		},
		{
			name: "configuration problem is terminal",
			shoot: newShoot(1, 1, op(opReconcile, stFailed, 20, ""),
				lastError("bad CIDR", gardencorev1beta1.ErrorConfigurationProblem)),
			wantClass:       retry.ClassTerminal,
			wantReason:      "ConfigurationProblem",
			wantCodes:       []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem},
			wantDescription: "bad CIDR",
		},
		{
			name: "quota exceeded is transient and asks Gardener to retry",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 50, ""),
				lastError("vCPU quota", gardencorev1beta1.ErrorInfraQuotaExceeded)),
			wantClass:       retry.ClassTransient,
			wantReason:      "InfraQuotaExceeded",
			wantRetry:       true,
			wantCodes:       []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded},
			wantDescription: "vCPU quota",
		},
		{
			name: "rate limits exceeded is transient",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 50, ""),
				lastError("throttled", gardencorev1beta1.ErrorInfraRateLimitsExceeded)),
			wantClass:       retry.ClassTransient,
			wantReason:      "InfraRateLimitsExceeded",
			wantRetry:       true,
			wantCodes:       []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraRateLimitsExceeded},
			wantDescription: "throttled",
		},
		{
			name: "problematic webhook is transient",
			shoot: newShoot(1, 1, op(opReconcile, stFailed, 90, ""),
				lastError("webhook", gardencorev1beta1.ErrorProblematicWebhook)),
			wantClass:       retry.ClassTransient,
			wantReason:      "ProblematicWebhook",
			wantRetry:       true,
			wantCodes:       []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorProblematicWebhook},
			wantDescription: "webhook",
		},
		{
			name: "unknown code is transient ShootOperationFailed",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 50, "op description"),
				lastError("something new", "ERR_SOMETHING_NEW")),
			wantClass:       retry.ClassTransient,
			wantReason:      ReasonShootOperationFailed,
			wantRetry:       true,
			wantCodes:       []gardencorev1beta1.ErrorCode{"ERR_SOMETHING_NEW"},
			wantDescription: "something new",
		},
		{
			name:            "failed without last errors is transient ShootOperationFailed",
			shoot:           newShoot(1, 1, op(opDelete, stFailed, 50, "Flow failed")),
			wantClass:       retry.ClassTransient,
			wantReason:      ReasonShootOperationFailed,
			wantRetry:       true,
			wantDescription: "Flow failed",
		},
		{
			name: "error without codes is transient ShootOperationFailed",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 50, ""),
				lastError(secretText)),
			wantClass:       retry.ClassTransient,
			wantReason:      ReasonShootOperationFailed,
			wantRetry:       true,
			wantDescription: "request failed: password=[redacted] was rejected",
		},
		{
			name: "user code beats an earlier retryable code",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 50, ""),
				lastError("quota", gardencorev1beta1.ErrorInfraQuotaExceeded),
				lastError("no access", gardencorev1beta1.ErrorInfraDependencies, gardencorev1beta1.ErrorInfraUnauthorized)),
			wantClass:  retry.ClassTerminal,
			wantReason: "InfraUnauthorized",
			wantCodes: []gardencorev1beta1.ErrorCode{
				gardencorev1beta1.ErrorInfraQuotaExceeded, gardencorev1beta1.ErrorInfraDependencies, gardencorev1beta1.ErrorInfraUnauthorized,
			},
			wantDescription: "no access",
		},
		{
			name: "first recognised retryable code wins",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 50, ""),
				lastError("unknown", "ERR_SOMETHING_NEW"),
				lastError("dependencies", gardencorev1beta1.ErrorRetryableInfraDependencies),
				lastError("quota", gardencorev1beta1.ErrorInfraQuotaExceeded)),
			wantClass:  retry.ClassTransient,
			wantReason: "RetryableInfraDependencies",
			wantRetry:  true,
			wantCodes: []gardencorev1beta1.ErrorCode{
				"ERR_SOMETHING_NEW", gardencorev1beta1.ErrorRetryableInfraDependencies, gardencorev1beta1.ErrorInfraQuotaExceeded,
			},
			wantDescription: "dependencies",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got := Observe(tt.shoot)

			if got.Done != tt.wantDone {
				t.Errorf("Done = %t, want %t", got.Done, tt.wantDone)
			}
			if got.Waiting != tt.wantWaiting {
				t.Errorf("Waiting = %q, want %q", got.Waiting, tt.wantWaiting)
			}
			if got.NeedsGardenerRetry != tt.wantRetry {
				t.Errorf("NeedsGardenerRetry = %t, want %t", got.NeedsGardenerRetry, tt.wantRetry)
			}
			if tt.shoot != nil && tt.shoot.Status.LastOperation != nil {
				lastOp := tt.shoot.Status.LastOperation
				if got.Operation != string(lastOp.Type) || got.State != string(lastOp.State) || got.Progress != lastOp.Progress {
					t.Errorf("operation = %s %s %d, want %s %s %d",
						got.Operation, got.State, got.Progress, lastOp.Type, lastOp.State, lastOp.Progress)
				}
			}
			checkObservedError(t, got.Err, tt.wantClass, tt.wantReason, tt.wantCodes, tt.wantDescription)
		})
	}
}

// checkObservedError checks the class, reason and *OperationError of err; an empty wantClass
// expects no error.
func checkObservedError(t *testing.T, err error, wantClass retry.Class, wantReason string,
	wantCodes []gardencorev1beta1.ErrorCode, wantDescription string,
) {
	t.Helper()
	if wantClass == "" {
		if err != nil {
			t.Errorf("Err = %v, want nil", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("Err = nil, want %s %s", wantClass, wantReason)
	}
	if c := retry.Classify(err); c.Class != wantClass || c.Reason != wantReason {
		t.Errorf("classification = %s/%s, want %s/%s", c.Class, c.Reason, wantClass, wantReason)
	}
	var opErr *OperationError
	if !errors.As(err, &opErr) {
		t.Fatalf("Err %v wraps no *OperationError", err)
	}
	if len(opErr.Codes) != len(wantCodes) {
		t.Errorf("codes = %v, want %v", opErr.Codes, wantCodes)
	} else {
		for i := range wantCodes {
			if opErr.Codes[i] != wantCodes[i] {
				t.Errorf("codes = %v, want %v", opErr.Codes, wantCodes)
				break
			}
		}
	}
	if opErr.Description != wantDescription {
		t.Errorf("description = %q, want %q", opErr.Description, wantDescription)
	}
	if opErr.Shoot != "garden-kyma/c-1" {
		t.Errorf("shoot = %q, want garden-kyma/c-1", opErr.Shoot)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error message leaks a credential: %v", err)
	}
}

// TestErrorCodeReasonCoversEveryCode checks the code table against every ErrorCode constant of
// Gardener v1.110: each has a valid reason, and exactly the user codes are terminal.
func TestErrorCodeReasonCoversEveryCode(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// code is a Gardener error code.
		code gardencorev1beta1.ErrorCode
		// wantReason is its reason.
		wantReason string
		// wantClass is its class.
		wantClass retry.Class
	}{
		{code: gardencorev1beta1.ErrorInfraUnauthenticated, wantReason: "InfraUnauthenticated", wantClass: retry.ClassTerminal},
		{code: gardencorev1beta1.ErrorInfraUnauthorized, wantReason: "InfraUnauthorized", wantClass: retry.ClassTerminal},
		{code: gardencorev1beta1.ErrorConfigurationProblem, wantReason: "ConfigurationProblem", wantClass: retry.ClassTerminal},
		{code: gardencorev1beta1.ErrorInfraQuotaExceeded, wantReason: "InfraQuotaExceeded", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorInfraRateLimitsExceeded, wantReason: "InfraRateLimitsExceeded", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorInfraDependencies, wantReason: "InfraDependencies", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorRetryableInfraDependencies, wantReason: "RetryableInfraDependencies", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorInfraResourcesDepleted, wantReason: "InfraResourcesDepleted", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorCleanupClusterResources, wantReason: "CleanupClusterResources", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorRetryableConfigurationProblem, wantReason: "RetryableConfigurationProblem", wantClass: retry.ClassTransient},
		{code: gardencorev1beta1.ErrorProblematicWebhook, wantReason: "ProblematicWebhook", wantClass: retry.ClassTransient},
	}
	if len(tests) != len(codeRules) {
		t.Errorf("the table has %d codes, the test %d", len(codeRules), len(tests))
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			t.Parallel()
			reason, class, ok := ErrorCodeReason(tt.code)
			if !ok || reason != tt.wantReason || class != tt.wantClass {
				t.Errorf("ErrorCodeReason = %s, %s, %t; want %s, %s, true", reason, class, ok, tt.wantReason, tt.wantClass)
			}
			if !retry.ValidReason(reason) {
				t.Errorf("reason %q is not a valid retry reason", reason)
			}
		})
	}
	if _, _, ok := ErrorCodeReason("ERR_SOMETHING_NEW"); ok {
		t.Error("an unknown code was recognised")
	}
	if !retry.ValidReason(ReasonShootOperationFailed) {
		t.Errorf("reason %q is not a valid retry reason", ReasonShootOperationFailed)
	}
}

func TestMirrorStatus(t *testing.T) {
	t.Parallel()

	updated := metav1.NewTime(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	longDescription := strings.Repeat("x", 2000)
	manyCodes := make([]gardencorev1beta1.ErrorCode, 20)
	for i := range manyCodes {
		manyCodes[i] = gardencorev1beta1.ErrorInfraQuotaExceeded
	}
	manyErrors := make([]gardencorev1beta1.LastError, 20)
	for i := range manyErrors {
		manyErrors[i] = lastError("error", gardencorev1beta1.ErrorInfraDependencies)
	}

	tests := []struct {
		// name describes the case.
		name string
		// shoot is the mirrored shoot.
		shoot *gardencorev1beta1.Shoot
		// check inspects the result.
		check func(t *testing.T, got *infrav1.GardenerStatus)
	}{
		{
			name:  "nil shoot",
			shoot: nil,
			check: func(t *testing.T, got *infrav1.GardenerStatus) { expectNil(t, "status", got) },
		},
		{
			name:  "nothing to mirror",
			shoot: newShoot(1, 0, nil),
			check: func(t *testing.T, got *infrav1.GardenerStatus) { expectNil(t, "status", got) },
		},
		{
			name: "operation and errors are copied",
			shoot: func() *gardencorev1beta1.Shoot {
				s := newShoot(1, 1, op(opCreate, stFailed, 45, "Flow failed"),
					lastError("quota", gardencorev1beta1.ErrorInfraQuotaExceeded, gardencorev1beta1.ErrorInfraDependencies))
				s.Status.LastOperation.LastUpdateTime = updated
				return s
			}(),
			check: func(t *testing.T, got *infrav1.GardenerStatus) {
				expectDeepEqual(t, "lastOperation", got.LastOperation, &infrav1.LastOperation{
					Type: "Create", State: "Failed", Progress: 45, Description: "Flow failed", LastUpdateTime: updated,
				})
				expectDeepEqual(t, "lastErrors", got.LastErrors, []infrav1.LastError{{
					Codes:       []string{"ERR_INFRA_QUOTA_EXCEEDED", "ERR_INFRA_DEPENDENCIES"},
					Description: "quota",
				}})
			},
		},
		{
			name:  "descriptions are sanitized",
			shoot: newShoot(1, 1, op(opReconcile, stError, 10, secretText), lastError(secretText)),
			check: func(t *testing.T, got *infrav1.GardenerStatus) {
				want := "request failed: password=[redacted] was rejected"
				expectEqual(t, "lastOperation.description", got.LastOperation.Description, want)
				expectEqual(t, "lastErrors[0].description", got.LastErrors[0].Description, want)
			},
		},
		{
			name:  "long descriptions are truncated",
			shoot: newShoot(1, 1, op(opCreate, stError, 10, longDescription), lastError(longDescription)),
			check: func(t *testing.T, got *infrav1.GardenerStatus) {
				for field, d := range map[string]string{
					"lastOperation.description": got.LastOperation.Description,
					"lastErrors[0].description": got.LastErrors[0].Description,
				} {
					if n := utf8.RuneCountInString(d); n != MaxDescriptionLength || !strings.HasSuffix(d, "…") {
						t.Errorf("%s has %d runes ending %q, want %d ending in an ellipsis", field, n, d[len(d)-3:], MaxDescriptionLength)
					}
				}
			},
		},
		{
			name:  "at most 16 errors of at most 16 codes",
			shoot: newShoot(1, 1, op(opCreate, stFailed, 10, ""), append([]gardencorev1beta1.LastError{lastError("many", manyCodes...)}, manyErrors...)...),
			check: func(t *testing.T, got *infrav1.GardenerStatus) {
				expectEqual(t, "len(lastErrors)", len(got.LastErrors), MaxMirroredErrors)
				expectEqual(t, "len(lastErrors[0].codes)", len(got.LastErrors[0].Codes), MaxMirroredCodes)
			},
		},
		{
			name:  "errors without an operation",
			shoot: newShoot(1, 1, nil, lastError("orphan")),
			check: func(t *testing.T, got *infrav1.GardenerStatus) {
				expectNil(t, "lastOperation", got.LastOperation)
				expectDeepEqual(t, "lastErrors", got.LastErrors, []infrav1.LastError{{Description: "orphan"}})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, MirrorStatus(tt.shoot))
		})
	}
}

func TestOperationErrorMessage(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// err is the error.
		err *OperationError
		// want is its message.
		want string
	}{
		{
			name: "codes and description",
			err: &OperationError{
				Shoot: "garden-kyma/c-1", Operation: "Create", Description: "quota",
				Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded, gardencorev1beta1.ErrorInfraDependencies},
			},
			want: "shoot garden-kyma/c-1: Create failed [ERR_INFRA_QUOTA_EXCEEDED, ERR_INFRA_DEPENDENCIES]: quota",
		},
		{
			name: "neither codes nor description",
			err:  &OperationError{Shoot: "garden-kyma/c-1", Operation: "Delete"},
			want: "shoot garden-kyma/c-1: Delete failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			expectEqual(t, "Error()", tt.err.Error(), tt.want)
		})
	}
}

// newShoot returns shoot garden-kyma/c-1 at generation with the given status.
func newShoot(generation, observed int64, lastOp *gardencorev1beta1.LastOperation, errs ...gardencorev1beta1.LastError) *gardencorev1beta1.Shoot {
	return &gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: "c-1", Namespace: "garden-kyma", Generation: generation},
		Status: gardencorev1beta1.ShootStatus{
			ObservedGeneration: observed,
			LastOperation:      lastOp,
			LastErrors:         errs,
		},
	}
}

// op returns a last operation.
func op(typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState, progress int32, description string) *gardencorev1beta1.LastOperation {
	return &gardencorev1beta1.LastOperation{Type: typ, State: state, Progress: progress, Description: description}
}

// lastError returns a last error with the given codes.
func lastError(description string, codes ...gardencorev1beta1.ErrorCode) gardencorev1beta1.LastError {
	return gardencorev1beta1.LastError{Description: description, Codes: codes}
}
