package runtime

// ReconcileOpenIDConnects exposes reconcileOpenIDConnects to the tests of package runtime_test.
var ReconcileOpenIDConnects = reconcileOpenIDConnects

// ShootWriteError exposes shootWriteError, the classification of a refused shoot write.
var ShootWriteError = shootWriteError

// RuntimeSeries and RuntimeLabels expose the Runtime's metric series and their labels.
var (
	RuntimeSeries = runtimeSeries
	RuntimeLabels = runtimeLabels
)
