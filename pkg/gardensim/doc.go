// Package gardensim plays Gardener for tests, benchmarks and the local
// environment, closely enough that a real client cannot tell it apart for
// the calls Infrastructure Manager makes. Start boots a real garden
// kube-apiserver (and etcd) serving core.gardener.cloud/v1beta1 Shoots in
// project namespaces garden-<project>, the CloudProfiles aws, az, gcp,
// converged-cloud-kyma and alicloud, and one ready Seed per provider and
// region of them (labelled seed.gardener.cloud/region); an HTTPS front proxy
// that the manager talks to (RESTConfig, Kubeconfig) and that adds the
// adminkubeconfig subresource, Gardener's deletion confirmation,
// rule-driven faults and admission; a scheduler and gardenlet-like
// controller that bind shoots to seeds, give them the default DNS domain
// <shoot>.<project>.<domain> and walk them through their operations,
// failing them by rule with real Gardener error codes and retrying Errors
// with backoff; and real API servers playing the shoot clusters (one per
// shoot sharing one etcd, or one for all).
//
// Admission is as strict as Gardener and its provider extensions, and
// cannot be turned off: every create, update, patch or server-side apply of
// a shoot is first run as a dry run, then decided by package admission —
// API validation (422 Invalid), the ShootMutator, ResourceReferenceManager
// and ShootValidator plugins against the CloudProfiles (403 Forbidden, or
// 500 for an unknown profile), the authentication-configuration webhook (422)
// and the providers' validation webhooks (403) — with Gardener's status code,
// reason and message; an admitted request goes through unchanged and what
// Gardener's mutating admission adds (defaulted versions and images, a
// dropped default domain) is written after it. Updates of a ConfigMap that a
// shoot uses for structured authentication are checked too.
//
// Rules change at run time through SetFaults, SetLifecycleRules,
// SetRegionReady and ApplyScenario or the admin HTTP API (AdminURL); Stop
// ends every process it started.
package gardensim
