// Package providerwebhook runs the provider extensions' own shoot
// validation in the simulated garden. The binaries that `make
// provider-admission` builds from hack/gardener/provider-admission serve the
// validation webhooks of gardener-extension-provider-aws, -azure, -gcp,
// -openstack and -alicloud (their pkg/admission/validator, what the real
// gardener-extension-admission-<provider> runs) over HTTPS with a CA of
// their own; Start runs them against a garden and Register installs the
// ValidatingWebhookConfiguration through which the garden's API server calls
// them for every CREATE and UPDATE of a shoot of their provider type, as it
// calls the real extensions: one webhook per type, named
// validation.<type>.provider.extensions.gardener.cloud, failing closed.
// provider-admission-v1.140 also serves two webhooks of Gardener's own
// admission controller (gardener-admission-controller v1.140.1),
// audit-policies.gardener.cloud and
// authentication-configurations.gardener.cloud, registered as Gardener's
// chart registers them: shoots and ConfigMap updates in project namespaces.
//
// The package knows nothing of the rest of the simulator: a garden served by
// CRDs on kube-apiserver and one served by gardener-apiserver call the same
// configuration.
package providerwebhook
