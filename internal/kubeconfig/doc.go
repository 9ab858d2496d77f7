// Package kubeconfig turns a kubeconfig that someone else wrote (a runtime's admin kubeconfig in
// its Secret, the Gardener project's kubeconfig mounted from a Secret) into a rest.Config that
// carries the kubeconfig's inline credentials and CA data and nothing else. Whatever makes the
// client act on the manager's own machine is refused, naming the source and the field: exec
// plugins and auth providers run programs, file references read the manager's files (a token
// file would be sent to whichever server the kubeconfig names), insecure-skip-tls-verify and
// http:// servers give the credentials away on the wire, a proxy routes them elsewhere, and
// impersonation acts as someone the credentials are not.
package kubeconfig
