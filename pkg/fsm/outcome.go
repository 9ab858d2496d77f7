package fsm

import "time"

// Kind says what an Outcome asks of the engine.
type Kind int

// The kinds of Outcome. The zero Kind is the zero Outcome's: a programming error.
const (
	KindInvalid Kind = iota
	KindNext
	KindWait
	KindDone
	KindFail
)

// String names the kind as the constructor that makes it.
func (k Kind) String() string {
	switch k {
	case KindNext:
		return "Next"
	case KindWait:
		return "Wait"
	case KindDone:
		return "Done"
	case KindFail:
		return "Fail"
	}
	return "Invalid"
}

// Outcome is what a step reports. Build it with Next, Wait, Done or Fail; the zero Outcome is a
// programming error and is treated as a failure. An Outcome either moves on or carries an error,
// never both, so a step cannot swallow an error it saw.
type Outcome struct {
	kind Kind
	next string
	poll time.Duration
	why  string
	err  error
}

// Next moves the object to another step; the step must be one of the edges the current step
// declares in the machine's table.
func Next(step string) Outcome { return Outcome{kind: KindNext, next: step} }

// Wait keeps the object in the current step while an external process runs. The engine looks
// again after poll (with jitter) or on the next watch event, and fails the step with a timeout
// once the step's deadline has passed. why says what the step waits for; it reaches the Ready
// condition.
func Wait(poll time.Duration, why string) Outcome {
	return Outcome{kind: KindWait, poll: poll, why: why}
}

// Done ends the machine: the object is in its desired state. The engine checks it again after
// the periodic re-check interval.
func Done() Outcome { return Outcome{kind: KindDone} }

// DoneUntil ends the machine like Done, and asks for the next check no later than after d, for
// objects that know when they need attention again (a credential that must be rotated).
func DoneUntil(d time.Duration) Outcome { return Outcome{kind: KindDone, poll: d} }

// Fail reports an error. The engine classifies it and decides whether and when to retry.
func Fail(err error) Outcome { return Outcome{kind: KindFail, err: err} }

// Err is the error of an outcome that failed, nil for any other.
func (o Outcome) Err() error { return o.err }

// The accessors below let tests and tools read an Outcome by value.

// Kind says what the outcome asks of the engine.
func (o Outcome) Kind() Kind { return o.kind }

// NextStep is the step a Next outcome moves to. It is empty for any other.
func (o Outcome) NextStep() string { return o.next }

// Poll is how long a Wait waits, or how soon a DoneUntil asks for the next check.
// It is zero for any other outcome, and for Done.
func (o Outcome) Poll() time.Duration { return o.poll }

// Why says what a Wait waits for. It is empty for any other outcome.
func (o Outcome) Why() string { return o.why }

// String describes the outcome for transcripts and logs.
func (o Outcome) String() string {
	switch o.kind {
	case KindNext:
		return "Next(" + o.next + ")"
	case KindWait:
		return "Wait(" + o.poll.String() + ", " + o.why + ")"
	case KindDone:
		if o.poll > 0 {
			return "DoneUntil(" + o.poll.String() + ")"
		}
		return "Done"
	case KindFail:
		if o.err == nil {
			return "Fail(<nil>)"
		}
		return "Fail(" + o.err.Error() + ")"
	}
	return "Invalid"
}
