package runtime

// ReconcileOpenIDConnects exposes reconcileOpenIDConnects to the tests of package runtime_test.
var ReconcileOpenIDConnects = reconcileOpenIDConnects

// ShootWriteError exposes shootWriteError, the classification of a refused shoot write.
var ShootWriteError = shootWriteError
