// Package lifecycle is the simulator's gardenlet: a controller that walks
// each Shoot of the garden API through status.lastOperation the way Gardener
// does, once gardener-scheduler (Gardener's own, which the simulator runs) has
// bound it to a seed. A bound shoot gets a Create operation, a spec change
// (generation ahead of observedGeneration) a Reconcile, a confirmed deletion a
// Delete that ends with the removal of the "gardener" finalizer. Operations
// move from Processing, with rising progress, to Succeeded after a
// configurable duration, unless a Rule says otherwise: Error (retried by the
// controller itself with exponential backoff, as gardenlet retries, unless
// its error code is one Gardener does not retry or the retry cycle has
// expired, which make it Failed), Failed with lastErrors carrying real
// Gardener error codes (restarted by the gardener.cloud/operation=retry
// annotation, which is then removed), or Processing forever. Deciding what to
// do (plan) and how the status changes (the status functions)
// are pure; the Reconciler only reads the shoot, applies them and patches.
package lifecycle
