package runtime

// ReconcileOpenIDConnects exposes reconcileOpenIDConnects to the tests of package runtime_test.
var ReconcileOpenIDConnects = reconcileOpenIDConnects
