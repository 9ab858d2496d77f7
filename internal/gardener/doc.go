// Package gardener translates between a Runtime and the Gardener Shoot behind it, without calling
// any API: Render builds what the manager writes to the garden, the desired Shoot
// (deterministically named after spec.shoot.name, so a create whose reply was lost is found again
// by name and never duplicated, and with TypeMeta set for server-side apply) and its structured
// authentication ConfigMap, keeping what the running shoot cannot change (its provider network
// layout, versions it already runs); Observe decides from a Shoot's status whether the
// last operation is done, still running, failed for a reason Gardener may overcome with a retry, or
// failed for a user or configuration error that no retry fixes (classified by Gardener's error
// code constants, never by message text, and returned as a retry-marked error the FSM engine
// understands), and MirrorStatus copies the shoot's last operation and errors, sanitized and
// bounded, into the Runtime status. Acting on these decisions (applying the Shoot, annotating
// gardener.cloud/operation=retry under backoff) is the caller's job.
package gardener
