// Package lifecycle is the simulator's gardener-scheduler and gardenlet: a
// controller that binds each new Shoot of the garden API to a ready Seed and
// then walks it through status.lastOperation the way Gardener does. Binding
// picks a seed as Gardener's scheduler does (usable seeds, the shoot's
// seedSelector, the provider, the region) and gives the shoot the default DNS
// domain; a shoot no seed fits stays unscheduled with lastOperation
// Create/Pending, a SchedulingFailed event and the scheduler's message, and is
// tried again later. A bound shoot gets a Create operation, a spec change
// (generation ahead of observedGeneration) a Reconcile, a confirmed deletion a
// Delete that ends with the removal of the "gardener" finalizer. Operations
// move from Processing, with rising progress, to Succeeded after a
// configurable duration, unless a Rule says otherwise: Error (retried by the
// controller itself with exponential backoff, as gardenlet retries, unless
// its error code is one Gardener does not retry or the retry cycle has
// expired, which make it Failed), Failed with lastErrors carrying real
// Gardener error codes (restarted by the gardener.cloud/operation=retry
// annotation, which is then removed), or Processing forever. Deciding what to
// do (plan, determineSeed) and how the status changes (the status functions)
// are pure; the Reconciler only reads the shoot, applies them and patches.
package lifecycle
