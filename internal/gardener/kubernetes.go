package gardener

import (
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
)

// kubernetes sets the version (the Runtime's or the default, never below what the shoot runs),
// points the API server at the structured authentication ConfigMap and adds the landscape's API
// server and kubelet settings. The legacy oidcConfig is never set: Gardener forbids it from
// Kubernetes 1.32 on.
func (b *shootBuilder) kubernetes(tenant *AuditLogTenant) gardencorev1beta1.Kubernetes {
	in := b.rt.Spec.Shoot.Kubernetes
	version := b.opts.DefaultKubernetesVersion
	if in.Version != nil && *in.Version != "" {
		version = *in.Version
	}
	if b.current != nil {
		version = b.notBelow("Kubernetes", version, b.current.Spec.Kubernetes.Version)
	}
	out := gardencorev1beta1.Kubernetes{Version: version, KubeAPIServer: &gardencorev1beta1.KubeAPIServerConfig{}}
	if b.auth != nil {
		out.KubeAPIServer.StructuredAuthentication = &gardencorev1beta1.StructuredAuthentication{ConfigMapName: b.auth.Name}
	}
	b.kubeAPIServer(out.KubeAPIServer, version, tenant)
	if gates := cloneNonEmpty(b.opts.KubeletFeatureGates); gates != nil {
		out.Kubelet = &gardencorev1beta1.KubeletConfig{KubernetesConfig: gardencorev1beta1.KubernetesConfig{FeatureGates: gates}}
	}
	return out
}

// kubeAPIServer adds the landscape's API server settings: the audit policy when audit logging
// is on, the bounded service account token expiration, feature gates and the runtime config
// of the APIs the shoot's Kubernetes version serves.
func (b *shootBuilder) kubeAPIServer(api *gardencorev1beta1.KubeAPIServerConfig, version string, tenant *AuditLogTenant) {
	if tenant != nil {
		api.AuditConfig = &gardencorev1beta1.AuditConfig{AuditPolicy: &gardencorev1beta1.AuditPolicy{
			ConfigMapRef: &corev1.ObjectReference{Name: b.opts.AuditLog.PolicyConfigMapName},
		}}
	}
	api.ServiceAccountConfig = &gardencorev1beta1.ServiceAccountConfig{
		ExtendTokenExpiration: ptr.To(false),
		MaxTokenExpiration:    &metav1.Duration{Duration: TokenExpiration(b.opts.MaxTokenExpiration)},
	}
	api.FeatureGates = cloneNonEmpty(b.opts.KubeAPIServerFeatureGates)
	api.RuntimeConfig = servedRuntimeConfig(b.opts.KubeAPIServerRuntimeConfig, version)
}

// Gardener's bounds of a service account token's maximum expiration: it refuses shorter ones
// and longer ones.
const (
	MinTokenExpiration = 30 * 24 * time.Hour
	MaxTokenExpiration = 90 * 24 * time.Hour
)

// TokenExpiration clamps d into Gardener's bounds; zero means the shortest.
func TokenExpiration(d time.Duration) time.Duration {
	return min(max(d, MinTokenExpiration), MaxTokenExpiration)
}

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
