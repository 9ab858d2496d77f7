// Package admission decides, as gardener-apiserver and the webhooks of
// Gardener's admission controller and extensions do, whether a write to a
// Shoot is admitted, and how Gardener's mutating admission changes it. Admit
// runs the steps in Gardener's order — API defaulting, the mutating plugins
// (ShootDNS, ShootMutator), the mutating webhook of shoot-dns-service, the
// registry strategy's preparation and validation, the validating plugins
// (ResourceReferenceManager, ExtensionValidator, ShootDNS, ShootValidator)
// and the validating webhooks (audit-policies.gardener.cloud,
// authentication-configuration.gardener.cloud and the validators of the acl
// and shoot-dns-service extensions) — and refuses with the
// *apierrors.StatusError the real component sends: the same HTTP code,
// reason, message and details. Every rule is a pure function of the old and
// new Shoot (converted to Gardener's internal version, so that rendered
// values read exactly as Gardener renders them) and an Env that reads
// CloudProfiles, Seeds, ControllerRegistrations, Secrets and ConfigMaps; the
// front proxy calls Admit with the object a dry run of the request produced.
// Where Gardener walks a map or set in random order, the simulator sorts, so
// that a refusal always reads the same. The provider extensions' webhooks
// are not here: their own code runs in the garden (package
// gardensim/providerwebhook).
package admission
