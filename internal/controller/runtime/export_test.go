package runtime

// RuntimeLabels exposes the labels that identify a Runtime in its series.
var RuntimeLabels = runtimeLabels
