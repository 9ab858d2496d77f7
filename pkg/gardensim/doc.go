// Package gardensim plays Gardener for tests, benchmarks and the local
// environment, closely enough that a real client cannot tell it apart for
// the calls Infrastructure Manager makes. Start boots a real garden
// kube-apiserver (and etcd) serving core.gardener.cloud/v1beta1 Shoots in
// project namespaces garden-<project>, the CloudProfiles aws, az, gcp,
// converged-cloud-kyma and alicloud (whose European regions offer the access
// restriction eu-access-only), ControllerRegistrations for their provider
// types, the networking and OS types and the extension types the manager
// writes, and one ready Seed per provider and region of the profiles
// (labelled seed.gardener.cloud/region, supporting the region's access
// restrictions); an HTTPS front proxy that the manager talks to (RESTConfig,
// Kubeconfig) and that adds the adminkubeconfig subresource, Gardener's
// deletion confirmation, rule-driven faults and admission; a scheduler and
// gardenlet-like controller that bind shoots to seeds, give them the default
// DNS domain <shoot>.<project>.<domain> and walk them through their
// operations, failing them by rule with real Gardener error codes and
// retrying Errors with backoff; and real API servers playing the shoot
// clusters (one per shoot sharing one etcd, or one for all).
//
// Admission is as strict as Gardener and its extensions, and cannot be
// turned off: every create, update, patch or server-side apply of a shoot is
// first run as a dry run, then decided by package admission with Gardener's
// status code, reason and message, in Gardener's order: the mutating
// plugins (ShootDNS, ShootMutator) and the shoot-dns-service mutator (403);
// API validation (422 Invalid: also of spec.dns, spec.extensions,
// spec.resources, feature gates, the service account token bounds, the
// maintenance window and tolerations); the ResourceReferenceManager (403:
// spec.resources, DNS provider credentials and the structured authentication
// ConfigMap must exist), ExtensionValidator (403: every extension type must
// be registered), ShootDNS (422) and ShootValidator (403: against the
// CloudProfiles, access restrictions included; 500 for an unknown profile)
// plugins; then the audit-policies and authentication-configuration webhooks
// (422) and those of the acl and shoot-dns-service extensions (403). The
// provider extensions' own shoot validators (aws, azure, gcp, openstack,
// alicloud, built into bin/gardener) run as a validating webhook of the
// garden API server (package providerwebhook; 403, or 422 from the
// extensions built on Gardener v1.136), which it calls for the write the
// proxy forwards, not for the dry run it decides on: after the rules above,
// as in Gardener, but on the shoot as the client sent it, before what
// Gardener's mutating admission adds. An admitted request goes through
// unchanged, and what Gardener's mutating admission adds (defaulted versions
// and images, a dropped default domain, the primary DNS provider, DNS
// credentials synced into credentialsRef) is written after it. Updates of a
// ConfigMap that a shoot uses for its audit policy or structured
// authentication are checked too.
//
// Rules change at run time through SetFaults, SetLifecycleRules,
// SetRegionReady, SetExtensionRegistered and ApplyScenario or the admin HTTP
// API (AdminURL); Stop ends every process it started.
//
// What the simulator serves is data of its own, embedded from the packages
// under data (crd, crd/shoot, cloudprofiles, controllerregistrations,
// scenarios), so that it starts from any working directory; config/ holds
// only the manifests of Infrastructure Manager itself.
package gardensim
