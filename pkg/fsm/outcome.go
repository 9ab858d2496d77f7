package fsm

import "time"

type outcomeKind int

const (
	kindNext outcomeKind = iota + 1
	kindWait
	kindDone
	kindFail
)

// Outcome is what a step reports. Build it with Next, Wait, Done or Fail; the zero Outcome is a
// programming error and is treated as a failure. An Outcome either moves on or carries an error,
// never both, so a step cannot swallow an error it saw.
type Outcome struct {
	kind outcomeKind
	next string
	poll time.Duration
	why  string
	err  error
}

// Next moves the object to another step; the step must be one of the edges the current step
// declares in the machine's table.
func Next(step string) Outcome { return Outcome{kind: kindNext, next: step} }

// Wait keeps the object in the current step while an external process runs. The engine looks
// again after poll (with jitter) or on the next watch event, and fails the step with a timeout
// once the step's deadline has passed. why says what the step waits for; it reaches the Ready
// condition.
func Wait(poll time.Duration, why string) Outcome {
	return Outcome{kind: kindWait, poll: poll, why: why}
}

// Done ends the machine: the object is in its desired state. The engine checks it again after
// the periodic re-check interval.
func Done() Outcome { return Outcome{kind: kindDone} }

// DoneUntil ends the machine like Done, and asks for the next check no later than after d, for
// objects that know when they need attention again (a credential that must be rotated).
func DoneUntil(d time.Duration) Outcome { return Outcome{kind: kindDone, poll: d} }

// Fail reports an error. The engine classifies it and decides whether and when to retry.
func Fail(err error) Outcome { return Outcome{kind: kindFail, err: err} }

// Err is the error of an outcome that failed, nil for any other.
func (o Outcome) Err() error { return o.err }

// String describes the outcome for transcripts and logs.
func (o Outcome) String() string {
	switch o.kind {
	case kindNext:
		return "Next(" + o.next + ")"
	case kindWait:
		return "Wait(" + o.poll.String() + ", " + o.why + ")"
	case kindDone:
		if o.poll > 0 {
			return "DoneUntil(" + o.poll.String() + ")"
		}
		return "Done"
	case kindFail:
		if o.err == nil {
			return "Fail(<nil>)"
		}
		return "Fail(" + o.err.Error() + ")"
	}
	return "Invalid"
}
