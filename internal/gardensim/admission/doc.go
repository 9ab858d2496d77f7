// Package admission runs, on a shoot that gardener-apiserver has already
// defaulted, mutated, validated and admitted, the webhooks that
// gardener-apiserver calls but that are not its own code and do not run
// here as their own code, because their modules are not served here: the
// mutating webhook of shoot-dns-service, then the validating webhooks of the
// acl and shoot-dns-service extensions. It refuses with the
// *apierrors.StatusError the real component sends: the same HTTP code,
// reason, message and details. Every rule is a pure function of the old and
// new Shoot (converted to Gardener's internal version, so that rendered
// values read exactly as Gardener renders them) and an Env that reads
// CloudProfiles, Secrets and ConfigMaps; the front proxy calls Admit with the
// object a dry run of the request through gardener-apiserver produced. Where
// a webhook walks a map or set in random order, the simulator sorts, so that
// a refusal always reads the same. The provider extensions' webhooks and
// Gardener's admission controller's are not here: their own code runs in the
// garden (package gardensim/providerwebhook).
package admission
