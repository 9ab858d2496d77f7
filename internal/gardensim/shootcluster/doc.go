// Package shootcluster runs the Kubernetes API servers that play shoot
// clusters. In dedicated mode each shoot gets its own real kube-apiserver,
// started in the background when its Create operation begins and stopped
// when its deletion succeeds; all of them share one etcd, each under its own
// --etcd-prefix, so that shoots are isolated from each other. In shared mode
// every shoot points at one API server, which keeps thousands of shoots
// affordable for benchmarks; a front serves it to each shoot under a path of
// its own and gives each shoot its own kyma-system namespace (front.go), so
// that the objects a runtime cluster holds for its runtime alone, such as
// the kyma-provisioning-info ConfigMap, are not every runtime's one object.
// The other namespaces and the cluster-scoped objects stay shared. Every API server trusts its own client CA,
// which mints the short-lived admin credentials that adminkubeconfig
// requests hand out. Every API server serves the CRDs of
// internal/gardensim/data/crd/shoot before it counts as ready, as if Gardener's
// extensions that bring them (shoot-oidc-service: OpenIDConnect) were enabled
// for every shoot.
package shootcluster
