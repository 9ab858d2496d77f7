// Package gardener renders a Runtime into the Gardener objects behind it and observes a Shoot's
// status. It holds no client and calls no API; package gardenclient owns the connection.
//
// Render builds what the manager writes to the garden: the desired Shoot and its structured
// authentication ConfigMap. The Shoot is named after spec.shoot.name, so a create whose reply
// was lost finds the same Shoot again. It keeps what a running shoot cannot change. render.go
// holds the entry point and the order of the Shoot's sections. Each section has its own file,
// read top to bottom in that order.
//
// Observe reads a Shoot's status: done, still running, failed for a reason a retry may
// overcome, or failed for a user or configuration error. It classifies by Gardener's error
// codes, never by message text. MirrorStatus copies the shoot's last operation and errors into
// the Runtime status. Acting on these decisions is the caller's job.
package gardener
