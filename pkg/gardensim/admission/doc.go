// Package admission decides, as gardener-apiserver and the webhooks of
// Gardener's provider extensions do, whether a write to a Shoot is admitted,
// and how Gardener's mutating admission changes it. Admit runs the steps in
// Gardener's order — API defaulting, the mutating plugins (ShootDNS,
// ShootMutator), the registry strategy's validation, the validating plugins
// (ResourceReferenceManager, ShootValidator) and the validating webhooks
// (authentication-configuration.gardener.cloud, then
// validation.<provider>.provider.extensions.gardener.cloud) — and refuses with
// the *apierrors.StatusError the real component sends: the same HTTP code,
// reason, message and details. Every rule is a pure function of the old and
// new Shoot (converted to Gardener's internal version, so that rendered
// values read exactly as Gardener renders them) and an Env that reads
// CloudProfiles and ConfigMaps; the front proxy calls Admit with the object a
// dry run of the request produced.
package admission
