// Package gardensim plays Gardener for tests, benchmarks and the local
// environment, closely enough that a real client cannot tell it apart for
// the calls Infrastructure Manager makes. Start boots a real garden
// kube-apiserver (and etcd) serving core.gardener.cloud/v1beta1 Shoot in
// project namespaces garden-<project>; an HTTPS front proxy that the manager
// talks to (RESTConfig, Kubeconfig) and that adds the adminkubeconfig
// subresource, Gardener's deletion confirmation and rule-driven faults; a
// gardenlet-like controller that walks shoots through their operations,
// failing them by rule with real Gardener error codes; and real API servers
// playing the shoot clusters (one per shoot sharing one etcd, or one for
// all). Rules change at run time through SetFaults and SetLifecycleRules or
// the admin HTTP API (AdminURL); Stop ends every process it started.
package gardensim
