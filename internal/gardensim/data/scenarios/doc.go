// Package scenarios embeds the named fault and lifecycle scenarios of the
// Gardener simulator (one YAML file per scenario), so that the command, the
// tests and the local environment load them by name.
package scenarios
