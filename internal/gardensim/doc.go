// Package gardensim plays Gardener for tests, benchmarks and the local
// environment, closely enough that a real client cannot tell it apart for
// the calls Infrastructure Manager makes. Start boots the garden (package
// garden): etcd, kube-apiserver and Gardener's own gardener-apiserver
// aggregated onto it, so that Gardener's validation, defaulting and admission
// plugins judge every Shoot. Into it go project namespaces garden-<project>
// with their Projects, Secrets with SecretBindings and CredentialsBindings,
// the default domain, the CloudProfiles aws, az, gcp, converged-cloud-kyma
// and alicloud (whose European regions offer the access restriction
// eu-access-only), ControllerRegistrations for their provider types, the
// networking and OS types and the extension types the manager writes, and
// one ready Seed per provider and region of the profiles (labelled
// seed.gardener.cloud/region, supporting the region's access restrictions).
// An HTTPS front proxy that the manager talks to (RESTConfig, Kubeconfig)
// adds the adminkubeconfig subresource, rule-driven faults, the request log
// and the webhooks gardener-apiserver would call that are not its own code;
// Gardener's own gardener-scheduler binds shoots to seeds through
// shoots/binding, and a gardenlet-like controller walks them through their
// operations, failing them by
// rule with real Gardener error codes and retrying Errors with backoff; and
// real API servers play the shoot clusters (one per shoot sharing one etcd,
// or one for all).
//
// Every create, update, patch or server-side apply of a shoot through the
// proxy is first run as a dry run, which gardener-apiserver decides with
// Gardener's own code; a shoot it admits is then put to package admission:
// the shoot-dns-service mutator, Gardener's admission controller's
// audit-policy and authentication-configuration webhooks (422) and those of
// the acl and shoot-dns-service extensions (403). The provider extensions'
// own shoot validators (aws, azure, gcp, openstack, alicloud, built into
// bin/gardener) run as a validating webhook the garden calls (package
// providerwebhook; 403, or 422 from the extensions built on Gardener
// v1.136) for the write the proxy forwards, not for its dry run. An admitted
// request goes through unchanged, and what the mutator adds is written
// after it. Updates of a
// ConfigMap that a shoot uses for its audit policy or structured
// authentication are checked too.
//
// Rules change at run time through SetFaults, SetLifecycleRules,
// SetRegionReady, SetExtensionRegistered and ApplyScenario or the admin HTTP
// API (AdminURL); Stop ends every process it started.
//
// What the simulator serves is data of its own, embedded from the packages
// under data (crd/shoot, cloudprofiles, controllerregistrations, scenarios),
// so that it starts from any working directory; config/ holds only the
// manifests of Infrastructure Manager itself.
package gardensim
