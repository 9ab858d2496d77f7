// Package retry holds the pure retry logic that the FSM engine applies when a
// step fails: Classify decides by error type and identity (never by message
// text) whether a failure is transient, throttled, a write conflict, terminal
// or a timeout, and gives it a bounded CamelCase reason that is safe as a
// metric label; a step that knows better marks its own error with Transient,
// Throttled, Conflict, Terminal or Timeout, and that marking wins. Policy turns
// an attempt number into an exponential delay with jitter and tells when the
// retry budget is exhausted; it reads no clock and draws no random numbers, so
// the caller passes the time and the random value in, and the engine, not this
// package, persists the attempt count and decides what to requeue. Sanitize
// makes an error message fit for a status field or an event: one line, no
// credentials, bounded length.
package retry
