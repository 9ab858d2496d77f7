// Package localenv is the machinery of `make run` (cmd/localenv) beyond the control plane, which
// package controlplane starts: it runs Prometheus and Alertmanager when they are installed (as
// child processes of package subprocess), receives their alert notifications, follows the
// scenarios, and turns every change of a Runtime into one line of progress. It is for a
// developer's machine only: nothing in it is used by the manager in production.
package localenv
