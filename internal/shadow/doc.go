// Package shadow lets a manager run beside another one and write nothing: a shadow manager reads
// the control plane, the garden and the runtime clusters, runs every step's decisions, and
// records the writes it would make instead of making them.
//
// Two parts keep that promise. The Client a step writes through sends every write as a
// server-side dry run (dryRun=All): the API server validates and defaults it, runs admission,
// and answers with the object the write would leave, which the Client compares with the object
// as it is and records field by field. Under it, Guard wraps the transport of every connection
// of a shadow manager and refuses any request that could change state, so a write that bypassed
// the Client fails instead of landing.
//
// A Recorder keeps, per object a controller reconciles, the writes of its latest pass, and
// serves them as a metric, in the log and as JSON for `kubectl runtime plan --shadow`. A
// manager that writes for real can record its writes the same way (Live), so that a test
// compares what a shadow predicted with what the takeover then did.
package shadow
