// Package localenv is the machinery of `make run` (cmd/localenv) beyond starting the parts.
// Package stack starts them.
// Package localenv receives the alert notifications and redirects the shipped Alertmanager webhooks to its receiver.
// It follows the scenarios and turns every change of a Runtime into one line of progress.
// It is for a developer's machine only: nothing in it is used by the manager in production.
package localenv
