package fsm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// StepDone is the step name an object carries once its machine is done.
const StepDone = "Done"

// StepFunc observes the world, acts, and reports an Outcome. It must be idempotent: the engine
// runs it again after a failure, after a restart, and on every periodic re-check.
type StepFunc[T Object] func(ctx context.Context, obj T) Outcome

// Step is one row of a machine's transition table.
type Step[T Object] struct {
	// Name of the step, CamelCase; it appears in status, metrics and alerts.
	Name string
	// Run is the step's work.
	Run StepFunc[T]
	// Next lists the steps Run may move to: the edges of the table.
	Next []string
	// Policy is the retry policy of the step; the zero Policy means the machine's default.
	Policy retry.Policy
	// Deadline bounds how long the step may wait for an external process, counted from when the
	// object entered the step; zero means no deadline.
	Deadline time.Duration
}

// Machine is a transition table: every step and every edge, readable in one place.
type Machine[T Object] struct {
	// Name of the controller the machine belongs to; it labels metrics.
	Name string
	// Start is the first step, and where a spec change or a periodic re-check starts over.
	Start string
	// Deletion is the first step once the object is being deleted; empty when the object has
	// nothing to clean up.
	Deletion string
	// Steps of the machine.
	Steps []Step[T]
	// DefaultPolicy applies to steps without a policy of their own.
	DefaultPolicy retry.Policy
}

// Validate checks that the table is complete: unique names, known edges and start steps, valid
// policies.
func (m Machine[T]) Validate() error {
	var errs []error
	names := map[string]bool{}
	for _, s := range m.Steps {
		if s.Name == "" || s.Name == StepDone || names[s.Name] {
			errs = append(errs, fmt.Errorf("step name %q is empty, reserved or repeated", s.Name))
		}
		names[s.Name] = true
		if s.Run == nil {
			errs = append(errs, fmt.Errorf("step %s has no Run", s.Name))
		}
	}
	for _, s := range m.Steps {
		for _, n := range s.Next {
			if !names[n] {
				errs = append(errs, fmt.Errorf("step %s has an edge to unknown step %q", s.Name, n))
			}
		}
		if err := m.policy(s).Validate(); err != nil {
			errs = append(errs, fmt.Errorf("step %s: %w", s.Name, err))
		}
	}
	if !names[m.Start] {
		errs = append(errs, fmt.Errorf("start step %q is unknown", m.Start))
	}
	if m.Deletion != "" && !names[m.Deletion] {
		errs = append(errs, fmt.Errorf("deletion step %q is unknown", m.Deletion))
	}
	return errors.Join(errs...)
}

func (m Machine[T]) policy(s Step[T]) retry.Policy {
	if s.Policy == (retry.Policy{}) {
		return m.DefaultPolicy
	}
	return s.Policy
}

// DeletionSteps returns the steps reachable from the deletion step: an object being deleted
// whose step is not among them has not yet taken its deletion in.
func (m Machine[T]) DeletionSteps() map[string]bool {
	reach := map[string]bool{}
	if m.Deletion == "" {
		return reach
	}
	byName := map[string]Step[T]{}
	for _, s := range m.Steps {
		byName[s.Name] = s
	}
	queue := []string{m.Deletion}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if reach[n] {
			continue
		}
		reach[n] = true
		queue = append(queue, byName[n].Next...)
	}
	return reach
}

// Mermaid renders the transition table as a Mermaid state diagram.
func (m Machine[T]) Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", m.Start)
	if m.Deletion != "" {
		fmt.Fprintf(&b, "    [*] --> %s: deletion\n", m.Deletion)
	}
	for _, s := range m.Steps {
		next := slices.Clone(s.Next)
		for _, n := range next {
			fmt.Fprintf(&b, "    %s --> %s\n", s.Name, n)
		}
		if len(next) == 0 {
			fmt.Fprintf(&b, "    %s --> [*]\n", s.Name)
		}
		if s.Deadline > 0 {
			fmt.Fprintf(&b, "    note right of %s: waits up to %s\n", s.Name, s.Deadline)
		}
	}
	return b.String()
}
