package lifecycle

import (
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/chance"
)

// Outcome is how an operation ends.
type Outcome string

const (
	// OutcomeSucceeded ends the operation in state Succeeded.
	OutcomeSucceeded Outcome = "Succeeded"
	// OutcomeError ends it in state Error; the controller retries it after
	// the rule's RetryAfter, as Gardener retries retryable errors.
	OutcomeError Outcome = "Error"
	// OutcomeFailed ends it in state Failed; only the
	// gardener.cloud/operation=retry annotation (or a spec change) starts it
	// again.
	OutcomeFailed Outcome = "Failed"
	// OutcomeHang leaves it in state Processing forever.
	OutcomeHang Outcome = "Hang"
)

// defaultStopProgress is where an operation that does not succeed stops.
const defaultStopProgress = 50

// knownCodes are the Gardener error codes a rule may set.
var knownCodes = []gardencorev1beta1.ErrorCode{
	gardencorev1beta1.ErrorInfraUnauthenticated,
	gardencorev1beta1.ErrorInfraUnauthorized,
	gardencorev1beta1.ErrorInfraQuotaExceeded,
	gardencorev1beta1.ErrorInfraRateLimitsExceeded,
	gardencorev1beta1.ErrorInfraDependencies,
	gardencorev1beta1.ErrorRetryableInfraDependencies,
	gardencorev1beta1.ErrorInfraResourcesDepleted,
	gardencorev1beta1.ErrorCleanupClusterResources,
	gardencorev1beta1.ErrorConfigurationProblem,
	gardencorev1beta1.ErrorRetryableConfigurationProblem,
	gardencorev1beta1.ErrorProblematicWebhook,
}

// Rule decides how matching operations end. Unset optional fields mean:
// every shoot, every operation, always, no limit.
type Rule struct {
	// Name identifies the rule in the admin API and in logs.
	Name string `json:"name,omitempty"`
	// Shoot is a glob on the shoot name.
	Shoot string `json:"shoot,omitempty"`
	// Namespace is a glob on the shoot's namespace (garden-<project>).
	Namespace string `json:"namespace,omitempty"`
	// Operations limits the rule to these operation types (Create,
	// Reconcile, Delete).
	Operations []gardencorev1beta1.LastOperationType `json:"operations,omitempty"`
	// Outcome is how a matching operation ends.
	Outcome Outcome `json:"outcome"`
	// Codes are the Gardener error codes put into status.lastErrors.
	Codes []gardencorev1beta1.ErrorCode `json:"codes,omitempty"`
	// Message replaces the default error description.
	Message string `json:"message,omitempty"`
	// Progress (1..99) is where an operation that does not succeed stops;
	// default 50.
	Progress int32 `json:"progress,omitempty"`
	// Probability in [0, 1] that a matching operation is affected; unset
	// means 1.
	Probability *float64 `json:"probability,omitempty"`
	// Count limits the rule to its first Count operations, so that for
	// example a quota that clears can be simulated; zero means no limit.
	Count int `json:"count,omitempty"`
	// PerShoot counts operations per shoot instead of across all shoots.
	PerShoot bool `json:"perShoot,omitempty"`
	// RetryAfter is how long an Error waits before the controller retries
	// the operation; unset means the controller's default.
	RetryAfter *metav1.Duration `json:"retryAfter,omitempty"`
}

// Validate reports the first problem of a rule, if any.
func (r Rule) Validate() error {
	switch r.Outcome {
	case OutcomeSucceeded, OutcomeError, OutcomeFailed, OutcomeHang:
	default:
		return fmt.Errorf("rule %q: unknown outcome %q", r.Name, r.Outcome)
	}
	for _, c := range r.Codes {
		if !slices.Contains(knownCodes, c) {
			return fmt.Errorf("rule %q: unknown Gardener error code %q", r.Name, c)
		}
	}
	if err := r.validateMatch(); err != nil {
		return err
	}
	if r.Progress < 0 || r.Progress > 99 {
		return fmt.Errorf("rule %q: progress %d is outside [1, 99]", r.Name, r.Progress)
	}
	if r.Probability != nil && (*r.Probability < 0 || *r.Probability > 1) {
		return fmt.Errorf("rule %q: probability %v is outside [0, 1]", r.Name, *r.Probability)
	}
	if r.Count < 0 {
		return fmt.Errorf("rule %q: negative count %d", r.Name, r.Count)
	}
	return nil
}

// validateMatch checks the operations and patterns of a rule.
func (r Rule) validateMatch() error {
	for _, op := range r.Operations {
		switch op {
		case gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationTypeDelete:
		default:
			return fmt.Errorf("rule %q: unsupported operation %q", r.Name, op)
		}
	}
	for _, glob := range []string{r.Shoot, r.Namespace} {
		if _, err := path.Match(glob, ""); err != nil {
			return fmt.Errorf("rule %q: pattern %q: %w", r.Name, glob, err)
		}
	}
	return nil
}

func (r Rule) matches(namespace, name string, op gardencorev1beta1.LastOperationType) bool {
	if len(r.Operations) > 0 && !slices.Contains(r.Operations, op) {
		return false
	}
	return glob(r.Shoot, name) && glob(r.Namespace, namespace)
}

func glob(pattern, value string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, value)
	return err == nil && ok
}

// Verdict is the decided end of one operation.
type Verdict struct {
	// Rule is the name of the rule that decided, empty by default.
	Rule string
	// Outcome is how the operation ends.
	Outcome Outcome
	// Codes go into lastErrors.
	Codes []gardencorev1beta1.ErrorCode
	// Message replaces the default error description.
	Message string
	// Progress is where a failing or hanging operation stops.
	Progress int32
	// RetryAfter is the wait before an Error is retried; zero means the
	// default.
	RetryAfter time.Duration
}

// RuleStatus is a rule as reported by the admin API.
type RuleStatus struct {
	Rule `json:",inline"`
	// Hits counts the operations the rule has decided since it was set.
	Hits int `json:"hits"`
}

// Rules holds the lifecycle rules; it is safe for concurrent use. The first
// rule that matches and fires decides an operation.
type Rules struct {
	chance *chance.Source

	mu    sync.Mutex
	rules []*ruleState
}

type ruleState struct {
	Rule
	hits      int
	shootHits map[string]int
}

// exhausted reports whether the rule has used up its count for a shoot.
func (r *ruleState) exhausted(shoot string) bool {
	if r.Count == 0 {
		return false
	}
	if r.PerShoot {
		return r.shootHits[shoot] >= r.Count
	}
	return r.hits >= r.Count
}

// NewRules returns an empty rule set drawing from a source seeded with seed.
func NewRules(seed uint64) *Rules {
	return &Rules{chance: chance.New(seed)}
}

// Set validates and installs rules, replacing the previous ones and their
// counters.
func (rs *Rules) Set(rules []Rule) error {
	states := make([]*ruleState, 0, len(rules))
	for n, r := range rules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("lifecycle rule %d: %w", n, err)
		}
		states = append(states, &ruleState{Rule: r, shootHits: map[string]int{}})
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.rules = states
	return nil
}

// Get returns the installed rules with their hit counts.
func (rs *Rules) Get() []RuleStatus {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]RuleStatus, 0, len(rs.rules))
	for _, r := range rs.rules {
		out = append(out, RuleStatus{Rule: r.Rule, Hits: r.hits})
	}
	return out
}

// Decide returns the verdict for a new operation, counting it against the
// rule that decides it.
func (rs *Rules) Decide(namespace, name string, op gardencorev1beta1.LastOperationType) Verdict {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	shoot := namespace + "/" + name
	for _, r := range rs.rules {
		if r.exhausted(shoot) || !r.matches(namespace, name, op) || !rs.chance.Hit(r.Probability) {
			continue
		}
		r.hits++
		r.shootHits[shoot]++
		v := Verdict{Rule: r.Name, Outcome: r.Outcome, Codes: r.Codes, Message: r.Message, Progress: r.Progress}
		if v.Progress == 0 {
			v.Progress = defaultStopProgress
		}
		if r.RetryAfter != nil {
			v.RetryAfter = r.RetryAfter.Duration
		}
		return v
	}
	return Verdict{Outcome: OutcomeSucceeded}
}
