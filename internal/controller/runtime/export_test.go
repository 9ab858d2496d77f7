package runtime

// RuntimeSeries and RuntimeLabels expose the Runtime's metric series and their labels.
var (
	RuntimeSeries = runtimeSeries
	RuntimeLabels = runtimeLabels
)
