package landscape

import (
	"errors"
	"flag"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// Options says how the manager uses the landscape beyond the file: the feature flags upstream
// passes on the command line.
type Options struct {
	// AuditLogMandatory refuses shoots in regions without an audit log tenant.
	AuditLogMandatory bool
	// ACL is the addresses the ACL ConfigMap holds; nil turns API server ACLs off.
	ACL *gardener.ACL
}

// Settings are the landscape's knobs on the command line. A converter configuration file
// supersedes the project and the default-* settings; without one, they are the render's
// defaults. Each field is named after its flag; DefaultOIDC's fields after the part of the
// --default-oidc-* flags that follows the prefix.
type Settings struct {
	// GardenerProject is the Gardener project; shoots live in garden-<project>.
	GardenerProject string
	// DefaultKubernetesVersion is used for runtimes that name none.
	DefaultKubernetesVersion string
	// DefaultMachineImage and DefaultMachineImageVersion are used for worker pools that name no
	// image; empty leaves it to Gardener's cloud profile.
	DefaultMachineImage, DefaultMachineImageVersion string
	// DefaultOIDC is the operators' OIDC provider, the main provider of runtimes that name none.
	// Without an issuer URL there is none.
	DefaultOIDC infrav1.OIDCConfig
	// ConverterConfigFilepath is the landscape's converter configuration file (upstream's
	// converter_config.json).
	ConverterConfigFilepath string
	// AuditLogMandatory refuses shoots in regions without an audit log tenant.
	AuditLogMandatory bool
	// APIServerACLEnabled restricts the API servers of runtimes that ask for it to their networks
	// plus the addresses of the ACL ConfigMap the converter configuration names.
	APIServerACLEnabled bool
}

// DefaultSettings returns the production defaults.
func DefaultSettings() Settings {
	return Settings{
		GardenerProject:          "kyma",
		DefaultKubernetesVersion: "1.33.4",
		AuditLogMandatory:        true,
	}
}

// BindFlags registers a flag for every setting, with s's values as defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.GardenerProject, "gardener-project", s.GardenerProject, "Gardener project; shoots live in garden-<project>")
	fs.StringVar(&s.DefaultKubernetesVersion, "default-kubernetes-version", s.DefaultKubernetesVersion, "Kubernetes version of runtimes that name none")
	fs.StringVar(&s.DefaultMachineImage, "default-machine-image", s.DefaultMachineImage, "machine image of worker pools that name none; empty leaves it to the cloud profile")
	fs.StringVar(&s.DefaultMachineImageVersion, "default-machine-image-version", s.DefaultMachineImageVersion, "version of the default machine image")
	bindOIDCFlags(fs, &s.DefaultOIDC)
	fs.StringVar(&s.ConverterConfigFilepath, "converter-config-filepath", s.ConverterConfigFilepath, "the landscape's converter configuration file; it supersedes --gardener-project and the --default-* flags")
	fs.BoolVar(&s.AuditLogMandatory, "audit-log-mandatory", s.AuditLogMandatory, "refuse shoots in regions without an audit log tenant (with a converter configuration)")
	fs.BoolVar(&s.APIServerACLEnabled, "api-server-acl-enabled", s.APIServerACLEnabled, "restrict the API servers of runtimes that ask for it; the rule includes the addresses of the converter configuration's ACL ConfigMap")
}

// bindOIDCFlags registers the default operator OIDC provider's flags.
func bindOIDCFlags(fs *flag.FlagSet, c *infrav1.OIDCConfig) {
	str := func(name, usage string, field **string) {
		fs.Func(name, usage, func(v string) error {
			*field = &v
			return nil
		})
	}
	str("default-oidc-issuer-url", "issuer URL of the operators' OIDC provider, the main provider of runtimes that name none", &c.IssuerURL)
	str("default-oidc-client-id", "client ID of the operators' OIDC provider", &c.ClientID)
	str("default-oidc-username-claim", "username claim of the operators' OIDC provider (default sub)", &c.UsernameClaim)
	str("default-oidc-username-prefix", "username prefix of the operators' OIDC provider; - for none", &c.UsernamePrefix)
	str("default-oidc-groups-claim", "groups claim of the operators' OIDC provider", &c.GroupsClaim)
}

// Landscape reads the converter configuration, when there is one, and checks that it has what
// the settings ask of it; nil without a file. Its errors name the field and the file.
func (s Settings) Landscape() (*Landscape, error) {
	if s.ConverterConfigFilepath == "" {
		if s.APIServerACLEnabled {
			return nil, errors.New("--api-server-acl-enabled needs --converter-config-filepath, which names the ACL ConfigMap")
		}
		return nil, nil
	}
	l, err := Load(s.ConverterConfigFilepath)
	if err != nil {
		return nil, err
	}
	if s.APIServerACLEnabled && l.ACLConfigMapName() == "" {
		return nil, &Error{Path: s.ConverterConfigFilepath, Errs: field.ErrorList{field.Required(
			field.NewPath("converter", "kubernetes", "kubeApiServer", "acl", "configMapName"), "--api-server-acl-enabled needs the ACL ConfigMap")}}
	}
	return l, nil
}

// RenderOptions returns the render options: l's when it is loaded, else the defaults of the
// settings. The namespace is the Gardener project's.
func (s Settings) RenderOptions(l *Landscape) gardener.RenderOptions {
	if l != nil {
		return l.RenderOptions(Options{AuditLogMandatory: s.AuditLogMandatory})
	}
	c := gardener.RenderOptions{
		Namespace:                  "garden-" + s.GardenerProject,
		DefaultKubernetesVersion:   s.DefaultKubernetesVersion,
		DefaultMachineImage:        s.DefaultMachineImage,
		DefaultMachineImageVersion: s.DefaultMachineImageVersion,
	}
	if s.DefaultOIDC.IssuerURL != nil && *s.DefaultOIDC.IssuerURL != "" {
		c.DefaultOIDC = s.DefaultOIDC.DeepCopy()
	}
	return c
}

// ACLConfigMap locates l's ACL ConfigMap in namespace, the manager's own; empty when ACLs are
// off.
func (s Settings) ACLConfigMap(l *Landscape, namespace string) types.NamespacedName {
	if !s.APIServerACLEnabled || l == nil {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: namespace, Name: l.ACLConfigMapName()}
}
