package gardener

import utilversion "k8s.io/apimachinery/pkg/util/version"

// apiVersionRange is the range of Kubernetes versions whose API server serves an API:
// from Added (empty: always) up to, not including, Removed (empty: still served).
type apiVersionRange struct {
	Added, Removed string
}

// versionedAPIs are the runtime config keys Gardener accepts only for some Kubernetes versions,
// with the ranges of Gardener v1.140.1 (pkg/utils/validation/apigroups): Gardener forbids a key
// outside its range whether it enables or disables the API. Keys not listed here are passed
// through for Gardener to judge.
var versionedAPIs = map[string]apiVersionRange{
	"certificates.k8s.io/v1beta1/clustertrustbundles":     {Added: "1.33"},
	"certificates.k8s.io/v1alpha1/podcertificaterequests": {Added: "1.34", Removed: "1.35"},
	"certificates.k8s.io/v1beta1/podcertificaterequests":  {Added: "1.35"},
	"coordination.k8s.io/v1beta1/leasecandidates":         {Added: "1.33"},
	"networking.k8s.io/v1/ipaddresses":                    {Added: "1.33"},
	"networking.k8s.io/v1/servicecidrs":                   {Added: "1.33"},
	"resource.k8s.io/v1":                                  {Added: "1.34"},
	"resource.k8s.io/v1beta2":                             {Added: "1.33"},
	"storage.k8s.io/v1/volumeattributesclasses":           {Added: "1.34"},
}

// servedRuntimeConfig returns the entries of the landscape's runtime config that a shoot of this
// Kubernetes version can carry, or nil when none is left. An API the version does not serve is
// left out rather than sent: the landscape configures it for the versions that have it, and
// Gardener refuses the whole shoot for it otherwise. An empty version is Gardener's default, the
// newest, which serves them all.
func servedRuntimeConfig(config map[string]bool, version string) map[string]bool {
	out := make(map[string]bool, len(config))
	for api, enabled := range config {
		if r, ok := versionedAPIs[api]; ok && version != "" && !r.serves(version) {
			continue
		}
		out[api] = enabled
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// serves reports whether version lies in the range. A version that does not parse is served,
// so Gardener judges it.
func (r apiVersionRange) serves(version string) bool {
	v, err := utilversion.ParseGeneric(version)
	if err != nil {
		return true
	}
	if r.Added != "" && v.LessThan(utilversion.MustParseGeneric(r.Added)) {
		return false
	}
	return r.Removed == "" || v.LessThan(utilversion.MustParseGeneric(r.Removed))
}
