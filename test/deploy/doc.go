// Package deploy proves the shipped installation on a real API server. It renders config/default
// with the kustomize Go API, applies every object server-side with strict field validation,
// and checks that the manager's Pod passes the restricted Pod Security admission. Then it runs
// the manager in the test process under the installed ServiceAccount's identity (impersonated,
// not as an administrator) with the installed arguments, against the Gardener simulator: a
// runtime is provisioned, its kubeconfig rotated, and deprovisioned with the shipped RBAC alone,
// while that identity is refused Secrets outside its namespace and the metrics endpoint answers
// only callers bound to the metrics-reader role.
package deploy
