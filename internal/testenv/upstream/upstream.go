// Package upstream lays out objects as upstream Kyma Infrastructure Manager leaves them on a
// landscape, for the tests of a takeover. Each function says which part of upstream's source
// it follows; the tests start from what upstream wrote, not from what this manager would write.
package upstream

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// Field managers of upstream's writes: the shoot is applied as kim; everything else is created
// and updated without a field owner, so the API server names the binary, manager.
const (
	ShootFieldManager = "kim"
	FieldManager      = "manager"
)

// ExtensionOrder is the order in which upstream's converter lists the extensions of a new shoot
// (pkg/gardener/shoot/extender/extensions, NewExtensionsExtenderForCreate: networking filter,
// certificates, DNS, OIDC, audit log, registry cache); others follow.
var ExtensionOrder = []string{
	gardener.ExtensionNetworkingFilter, gardener.ExtensionCert, gardener.ExtensionDNS,
	gardener.ExtensionOIDCService, gardener.ExtensionAuditLog, gardener.ExtensionRegistryCache,
}

// Shoot returns rt's shoot as upstream's converter writes it and Gardener stores it, from ours,
// the manager's render of a new shoot, for what both write alike:
//   - labels account and subaccount only, and upstream's runtime-generation annotation;
//   - extensions in ExtensionOrder;
//   - the networking filter with a providerConfig only when the ingress filter is on, then
//     without apiVersion and kind (NewNetworkFilterExtension);
//   - the DNS extension's providerConfig in upstream's form: dnsProviderReplication on, the
//     provider's secret as secretName, syncProvidersFromShootSpecDNS (newDNSExtensionConfig);
//   - a DNS provider named by secretName with the credentialsRef Gardener adds to it.
func Shoot(rt *infrav1.Runtime, ours *gardencorev1beta1.Shoot) (*gardencorev1beta1.Shoot, error) {
	out := ours.DeepCopy()
	out.Labels = map[string]string{gardener.LabelAccount: ours.Labels[gardener.LabelAccount], gardener.LabelSubaccount: ours.Labels[gardener.LabelSubaccount]}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations["infrastructuremanager.kyma-project.io/runtime-generation"] = fmt.Sprint(max(rt.Generation, 1))
	slices.SortStableFunc(out.Spec.Extensions, func(a, b gardencorev1beta1.Extension) int {
		rank := func(e gardencorev1beta1.Extension) int {
			if i := slices.Index(ExtensionOrder, e.Type); i >= 0 {
				return i
			}
			return len(ExtensionOrder)
		}
		return rank(a) - rank(b)
	})
	for i := range out.Spec.Extensions {
		e := &out.Spec.Extensions[i]
		switch e.Type {
		case gardener.ExtensionNetworkingFilter:
			e.ProviderConfig = nil
			if f := rt.Spec.Security.Networking.Filter; f.Ingress != nil && f.Ingress.Enabled {
				e.ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"egressFilter":{"blackholingEnabled":true}}`)}
			}
		case gardener.ExtensionDNS:
			cfg, err := dnsConfig(e.ProviderConfig)
			if err != nil {
				return nil, err
			}
			e.ProviderConfig = cfg
		}
	}
	if out.Spec.DNS != nil {
		for i := range out.Spec.DNS.Providers { //nolint:staticcheck // SA1019: the provider Gardener syncs.
			p := &out.Spec.DNS.Providers[i]                                   //nolint:staticcheck // SA1019: as above.
			if name := p.SecretName; name != nil && p.CredentialsRef == nil { //nolint:staticcheck // SA1019: as above.
				p.CredentialsRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: *name}
			}
		}
	}
	return out, nil
}

// dnsConfig rewrites the manager's DNS providerConfig in upstream's form.
func dnsConfig(ours *runtime.RawExtension) (*runtime.RawExtension, error) {
	var cfg map[string]any
	if err := json.Unmarshal(ours.Raw, &cfg); err != nil {
		return nil, fmt.Errorf("decode DNS providerConfig: %w", err)
	}
	providers, _ := cfg["providers"].([]any)
	if len(providers) == 0 {
		// Gardener's internal DNS: upstream writes only the synchronisation.
		return rawJSON(map[string]any{"apiVersion": cfg["apiVersion"], "kind": cfg["kind"], "syncProvidersFromShootSpecDNS": true})
	}
	for _, p := range providers {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if c, ok := p["credentials"]; ok {
			p["secretName"] = c
			delete(p, "credentials")
		}
	}
	cfg["dnsProviderReplication"] = map[string]any{"enabled": true}
	cfg["syncProvidersFromShootSpecDNS"] = true
	return rawJSON(cfg)
}

func rawJSON(v any) (*runtime.RawExtension, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode providerConfig: %w", err)
	}
	return &runtime.RawExtension{Raw: data}, nil
}

// AuthenticationConfigMap returns the structured authentication ConfigMap upstream writes for
// rt's OIDC provider (the landscape's default when the Runtime names no issuer or client), in
// namespace (pkg/gardener/structuredauth: its own structs encoded by sigs.k8s.io/yaml, no labels,
// no annotations, the groups prefix defaulted to "").
func AuthenticationConfigMap(rt *infrav1.Runtime, defaultOIDC *infrav1.OIDCConfig, namespace string) (*corev1.ConfigMap, error) {
	oidc := rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig
	if oidc.IssuerURL == nil || oidc.ClientID == nil {
		if defaultOIDC == nil {
			return nil, nil
		}
		oidc = *defaultOIDC
	}
	type claim struct {
		Claim  string  `json:"claim"`
		Prefix *string `json:"prefix,omitempty"`
	}
	type jwt struct {
		Issuer struct {
			URL       string   `json:"url"`
			Audiences []string `json:"audiences"`
		} `json:"issuer"`
		ClaimMappings struct {
			Username claim `json:"username"`
			Groups   claim `json:"groups"`
		} `json:"claimMappings"`
	}
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	var j jwt
	j.Issuer.URL, j.Issuer.Audiences = deref(oidc.IssuerURL), []string{deref(oidc.ClientID)}
	groupsPrefix := deref(oidc.GroupsPrefix)
	j.ClaimMappings.Username = claim{Claim: deref(oidc.UsernameClaim), Prefix: oidc.UsernamePrefix}
	j.ClaimMappings.Groups = claim{Claim: deref(oidc.GroupsClaim), Prefix: &groupsPrefix}
	data, err := yaml.Marshal(struct {
		metav1.TypeMeta
		JWT []jwt `json:"jwt"`
	}{metav1.TypeMeta{Kind: "AuthenticationConfiguration", APIVersion: "apiserver.config.k8s.io/v1beta1"}, []jwt{j}})
	if err != nil {
		return nil, fmt.Errorf("encode authentication configuration: %w", err)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{gardener.AuthenticationConfigKey: string(data)}}
	cm.Name, cm.Namespace = gardener.AuthenticationConfigName(rt.Spec.Shoot.Name), namespace
	return cm, nil
}

// AdminBinding is the cluster-admin binding upstream creates for an administrator
// (runtime_fsm_apply_clusterrolebindings.go, toAdminClusterRoleBinding): named admin-<random>
// by generateName, labelled with the reconciler label alone.
func AdminBinding(name, user string) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	b.Name = name
	b.Labels = map[string]string{"reconciler.kyma-project.io/managed-by": "infrastructure-manager"}
	return b
}

// GardenerCluster is the GardenerCluster upstream creates for rt (runtime_fsm_create_kubeconfig.go,
// makeGardenerClusterForRuntime): named after the runtime id, with the Runtime's identity labels,
// the regions, the shoot name, managed-by and internal, and the skr-domain annotation.
func GardenerCluster(rt *infrav1.Runtime, shoot *gardencorev1beta1.Shoot) *infrav1.GardenerCluster {
	id := rt.Labels[infrav1.LabelRuntimeID]
	gc := &infrav1.GardenerCluster{}
	gc.Name, gc.Namespace = id, rt.Namespace
	gc.Labels = map[string]string{
		infrav1.LabelInstanceID:      rt.Labels[infrav1.LabelInstanceID],
		infrav1.LabelRuntimeID:       id,
		infrav1.LabelBrokerPlanID:    rt.Labels[infrav1.LabelBrokerPlanID],
		infrav1.LabelBrokerPlanName:  rt.Labels[infrav1.LabelBrokerPlanName],
		infrav1.LabelGlobalAccountID: rt.Labels[infrav1.LabelGlobalAccountID],
		infrav1.LabelSubaccountID:    rt.Labels[infrav1.LabelSubaccountID],
		infrav1.LabelKymaName:        rt.Labels[infrav1.LabelKymaName],
		infrav1.LabelPlatformRegion:  rt.Spec.Shoot.PlatformRegion,
		infrav1.LabelRegion:          rt.Spec.Shoot.Region,
		infrav1.LabelShootName:       shoot.Name,
		infrav1.LabelKymaManagedBy:   "infrastructure-manager",
		infrav1.LabelKymaInternal:    "true",
	}
	if shoot.Spec.DNS != nil && shoot.Spec.DNS.Domain != nil {
		gc.Annotations = map[string]string{infrav1.AnnotationSKRDomain: *shoot.Spec.DNS.Domain}
	}
	gc.Spec.Shoot.Name = shoot.Name
	gc.Spec.Kubeconfig.Secret = infrav1.SecretKeyRef{Name: "kubeconfig-" + id, Namespace: rt.Namespace, Key: "config"}
	return gc
}

// KubeconfigSecret is the Secret upstream's GardenerCluster controller writes for gc with the
// kubeconfig it fetched at synced (internal/controller/kubeconfig, newSecret): gc's labels plus
// managed-by and cluster-name, and the last-sync annotation alone.
func KubeconfigSecret(gc *infrav1.GardenerCluster, kubeconfig []byte, synced time.Time) *corev1.Secret {
	s := &corev1.Secret{Data: map[string][]byte{gc.Spec.Kubeconfig.Secret.Key: kubeconfig}}
	s.Name, s.Namespace = gc.Spec.Kubeconfig.Secret.Name, gc.Spec.Kubeconfig.Secret.Namespace
	s.Labels = map[string]string{}
	for k, v := range gc.Labels {
		s.Labels[k] = v
	}
	s.Labels[infrav1.LabelKymaManagedBy] = "infrastructure-manager"
	s.Labels[infrav1.LabelClusterName] = gc.Name
	s.Annotations = map[string]string{infrav1.AnnotationLastSync: synced.UTC().Format(time.RFC3339)}
	return s
}
