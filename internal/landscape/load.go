package landscape

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// Landscape is a loaded and validated converter configuration with the files it names.
type Landscape struct {
	// Path is the file the configuration was read from.
	Path string
	// Config is the file's content.
	Config Config
	// AuditLogTenants holds the tenant file: tenants by provider type and region.
	AuditLogTenants map[string]map[string]gardener.AuditLogTenant
	// MaintenanceWindows holds the window file: maintenance windows by region.
	MaintenanceWindows map[string]gardencorev1beta1.MaintenanceTimeWindow
}

// Error is a configuration that cannot be used: the file and the fields at fault.
type Error struct {
	// Path is the file at fault.
	Path string
	// Errs names each field and what is wrong with it.
	Errs field.ErrorList
}

func (e *Error) Error() string {
	return fmt.Sprintf("converter configuration %s: %s", e.Path, e.Errs.ToAggregate().Error())
}

// Load reads the converter configuration at path and the files it names, relative paths being
// relative to the configuration's directory, and validates them. Unknown and misspelt fields
// are errors, as are missing required fields: every error names the field and its file.
func Load(path string) (*Landscape, error) {
	var cfg Config
	if err := decodeStrict(path, &cfg); err != nil {
		return nil, err
	}
	l := &Landscape{Path: path, Config: cfg}
	if errs := cfg.validate(); len(errs) > 0 {
		return nil, &Error{Path: path, Errs: errs}
	}
	var err error
	if l.AuditLogTenants, err = loadTenants(resolve(path, cfg.Converter.AuditLog.TenantConfigPath)); err != nil {
		return nil, err
	}
	if p := cfg.Converter.MaintenanceWindow.WindowMapPath; p != "" {
		if l.MaintenanceWindows, err = loadWindows(resolve(path, p)); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// resolve makes a path the configuration names relative to the configuration's directory.
func resolve(config, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(config), path)
}

// decodeStrict decodes the JSON file at path into v, refusing unknown and duplicate fields.
func decodeStrict(path string, v any) error {
	data, err := os.ReadFile(path) //nolint:gosec // G304: reading the file the operator names is the point.
	if err != nil {
		return fmt.Errorf("converter configuration: %w", err)
	}
	strict, err := sigsjson.UnmarshalStrict(data, v)
	if err != nil {
		return &Error{Path: path, Errs: field.ErrorList{field.Invalid(field.NewPath(""), "", decodeMessage(err))}}
	}
	if len(strict) > 0 {
		errs := make(field.ErrorList, 0, len(strict))
		for _, e := range strict {
			errs = append(errs, field.Invalid(field.NewPath(""), "", e.Error()))
		}
		return &Error{Path: path, Errs: errs}
	}
	return nil
}

// decodeMessage says where a JSON document does not decode.
func decodeMessage(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("field %s: cannot take a JSON %s, it must be a %s", typeErr.Field, typeErr.Value, typeErr.Type)
	}
	return err.Error()
}

// validate checks the fields Load requires and the values it can judge on its own.
func (c Config) validate() field.ErrorList {
	conv := field.NewPath("converter")
	k := conv.Child("kubernetes")
	var errs field.ErrorList
	errs = append(errs, version(c.Converter.Kubernetes.DefaultVersion, k.Child("defaultVersion"))...)
	if p := c.Converter.Kubernetes.DefaultOperatorOidc; p == nil {
		errs = append(errs, field.Required(k.Child("defaultOperatorOidc"), "the operators' OIDC provider"))
	} else {
		errs = append(errs, p.validate(k.Child("defaultOperatorOidc"))...)
	}
	api := k.Child("kubeApiServer")
	if v := c.Converter.Kubernetes.KubeAPIServer.MaxTokenExpiration; v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			errs = append(errs, field.Invalid(api.Child("maxTokenExpiration"), v, "must be a duration such as 720h"))
		}
	}
	errs = append(errs, c.Converter.DNS.validate(conv.Child("dns"))...)
	errs = append(errs, c.Converter.Provider.Worker.validate(conv.Child("provider", "worker"))...)
	img := conv.Child("machineImage")
	required(&errs, c.Converter.MachineImage.DefaultName, img.Child("defaultName"))
	required(&errs, c.Converter.MachineImage.DefaultVersion, img.Child("defaultVersion"))
	errs = append(errs, dnsLabel(c.Converter.Gardener.ProjectName, conv.Child("gardener", "projectName"))...)
	audit := conv.Child("auditLogging")
	required(&errs, c.Converter.AuditLog.PolicyConfigMapName, audit.Child("policyConfigMapName"))
	required(&errs, c.Converter.AuditLog.TenantConfigPath, audit.Child("tenantConfigPath"))
	for _, region := range sortedKeys(c.Converter.Tolerations) {
		for i, t := range c.Converter.Tolerations[region] {
			if t.Key == "" {
				errs = append(errs, field.Required(conv.Child("tolerations").Key(region).Index(i).Child("key"), "a toleration needs a key"))
			}
		}
	}
	if p := c.Cluster.DefaultSharedIASTenant; p != nil {
		errs = append(errs, p.validate(field.NewPath("cluster", "defaultSharedIASTenant"))...)
	}
	return errs
}

// validate checks that a provider has what a JWT authenticator needs.
func (p OIDCProvider) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if u, err := url.Parse(p.IssuerURL); p.IssuerURL == "" || err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("issuerURL"), p.IssuerURL, "must be an https URL"))
	}
	required(&errs, p.ClientID, path.Child("clientID"))
	required(&errs, p.UsernameClaim, path.Child("usernameClaim"))
	return errs
}

// validate checks that the DNS provider is complete, or absent.
func (c DNSConfig) validate(path *field.Path) field.ErrorList {
	if c.GardenerInternal() {
		return nil
	}
	var errs field.ErrorList
	required(&errs, c.SecretName, path.Child("secretName"))
	required(&errs, c.ProviderType, path.Child("providerType"))
	required(&errs, c.DomainPrefix, path.Child("domainPrefix"))
	return errs
}

// validate checks the workers' drain settings: both or neither, an eviction retry count that
// fits Gardener's int32 and is not negative, a positive drain timeout.
func (c WorkerConfig) validate(path *field.Path) field.ErrorList {
	if c.DefaultMaxEvictRetries == "" && c.DefaultMachineDrainTimeout == "" {
		return nil
	}
	var errs field.ErrorList
	if _, err := c.maxEvictRetries(); err != nil {
		errs = append(errs, field.Invalid(path.Child("defaultMaxEvictRetries"), c.DefaultMaxEvictRetries, "must be a whole number such as 30"))
	}
	if _, err := c.drainTimeout(); err != nil {
		errs = append(errs, field.Invalid(path.Child("defaultMachineDrainTimeout"), c.DefaultMachineDrainTimeout, "must be a positive duration such as 48h"))
	}
	return errs
}

// errNotPositive means a count or duration that must be positive is not.
var errNotPositive = errors.New("not positive")

// maxEvictRetries parses DefaultMaxEvictRetries.
func (c WorkerConfig) maxEvictRetries() (int32, error) {
	n, err := strconv.ParseInt(c.DefaultMaxEvictRetries, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("defaultMaxEvictRetries: %w", err)
	}
	if n < 0 {
		return 0, fmt.Errorf("defaultMaxEvictRetries: %w", errNotPositive)
	}
	return int32(n), nil
}

// drainTimeout parses DefaultMachineDrainTimeout.
func (c WorkerConfig) drainTimeout() (time.Duration, error) {
	d, err := time.ParseDuration(c.DefaultMachineDrainTimeout)
	if err != nil {
		return 0, fmt.Errorf("defaultMachineDrainTimeout: %w", err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("defaultMachineDrainTimeout: %w", errNotPositive)
	}
	return d, nil
}

// machineControllerManager returns the settings every worker pool gets; nil when the file sets
// none. Load validated them.
func (c WorkerConfig) machineControllerManager() *gardencorev1beta1.MachineControllerManagerSettings {
	retries, errR := c.maxEvictRetries()
	timeout, errT := c.drainTimeout()
	if errR != nil || errT != nil {
		return nil
	}
	return &gardencorev1beta1.MachineControllerManagerSettings{
		MaxEvictRetries:     &retries,
		MachineDrainTimeout: &metav1.Duration{Duration: timeout},
	}
}

// required adds an error when value is empty.
func required(errs *field.ErrorList, value string, path *field.Path) {
	if value == "" {
		*errs = append(*errs, field.Required(path, ""))
	}
}

// version checks a required Kubernetes version.
func version(v string, path *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if _, err := utilversion.ParseSemantic(v); err != nil {
		return field.ErrorList{field.Invalid(path, v, "must be a version such as 1.33.4")}
	}
	return nil
}

// dnsLabelRE is a DNS label, the form of a Gardener project name.
var dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// dnsLabel checks a required project name.
func dnsLabel(v string, path *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if len(v) > 10 || !dnsLabelRE.MatchString(v) {
		return field.ErrorList{field.Invalid(path, v, "must be a Gardener project name: at most 10 lowercase letters, digits and '-'")}
	}
	return nil
}

// loadTenants reads the audit log tenant file: a JSON map from provider type to region to
// tenant.
func loadTenants(path string) (map[string]map[string]gardener.AuditLogTenant, error) {
	var file map[string]map[string]AuditLogTenant
	if err := decodeStrict(path, &file); err != nil {
		return nil, err
	}
	out := make(map[string]map[string]gardener.AuditLogTenant, len(file))
	var errs field.ErrorList
	for _, provider := range sortedKeys(file) {
		out[provider] = make(map[string]gardener.AuditLogTenant, len(file[provider]))
		for _, region := range sortedKeys(file[provider]) {
			t := file[provider][region]
			p := field.NewPath(provider).Key(region)
			required(&errs, t.TenantID, p.Child("tenantID"))
			required(&errs, t.SecretName, p.Child("secretName"))
			if u, err := url.Parse(t.ServiceURL); t.ServiceURL == "" || err != nil || u.Host == "" {
				errs = append(errs, field.Invalid(p.Child("serviceURL"), t.ServiceURL, "must be a URL"))
			}
			out[provider][region] = gardener.AuditLogTenant(t)
		}
	}
	if len(errs) > 0 {
		return nil, &Error{Path: path, Errs: errs}
	}
	return out, nil
}

// windowRE is Gardener's maintenance time format, HHMMSS+ZZZZ.
var windowRE = regexp.MustCompile(`^([01]\d|2[0-3])[0-5]\d[0-5]\d[+-]\d{4}$`)

// loadWindows reads the maintenance window file: a JSON map from region to {"begin", "end"},
// the form upstream reads, or a ConfigMap manifest (YAML or JSON) whose data.config holds that
// map. A document whose kind is ConfigMap is the manifest; any other is the map.
func loadWindows(path string) (map[string]gardencorev1beta1.MaintenanceTimeWindow, error) {
	data, err := os.ReadFile(path) //nolint:gosec // G304: reading the file the operator names is the point.
	if err != nil {
		return nil, fmt.Errorf("maintenance windows: %w", err)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, &Error{Path: path, Errs: field.ErrorList{field.Invalid(field.NewPath(""), "", err.Error())}}
	}
	windowsJSON, root := data, field.NewPath("")
	if head.Kind == "ConfigMap" {
		if windowsJSON, err = configMapWindows(path, data); err != nil {
			return nil, err
		}
		root = field.NewPath("data", "config")
	}
	return parseWindows(path, windowsJSON, root)
}

// configMapWindows returns data.config of a ConfigMap manifest.
func configMapWindows(path string, data []byte) ([]byte, error) {
	var cm struct {
		Data struct {
			Config string `json:"config"`
		} `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		return nil, &Error{Path: path, Errs: field.ErrorList{field.Invalid(field.NewPath(""), "", err.Error())}}
	}
	if cm.Data.Config == "" {
		return nil, &Error{Path: path, Errs: field.ErrorList{field.Required(field.NewPath("data", "config"), "a JSON map from region to {begin, end}")}}
	}
	return []byte(cm.Data.Config), nil
}

// windowFile is one region's window as the file holds it.
type windowFile struct {
	Begin string `json:"begin"`
	End   string `json:"end"`
}

// parseWindows decodes a JSON map from region to window, refusing unknown fields, and checks
// every time; root is where the map sits in the file, for the errors.
func parseWindows(path string, data []byte, root *field.Path) (map[string]gardencorev1beta1.MaintenanceTimeWindow, error) {
	var windows map[string]windowFile
	strict, err := sigsjson.UnmarshalStrict(data, &windows)
	if err != nil {
		return nil, &Error{Path: path, Errs: field.ErrorList{field.Invalid(root, "", decodeMessage(err))}}
	}
	var errs field.ErrorList
	for _, e := range strict {
		errs = append(errs, field.Invalid(root, "", e.Error()))
	}
	out := make(map[string]gardencorev1beta1.MaintenanceTimeWindow, len(windows))
	for _, region := range sortedKeys(windows) {
		w := windows[region]
		for key, value := range map[string]string{"begin": w.Begin, "end": w.End} {
			if !windowRE.MatchString(value) {
				errs = append(errs, field.Invalid(root.Key(region).Child(key), value, "must be a time such as 220000+0000"))
			}
		}
		out[region] = gardencorev1beta1.MaintenanceTimeWindow{Begin: w.Begin, End: w.End}
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
		return nil, &Error{Path: path, Errs: errs}
	}
	return out, nil
}

// sortedKeys returns m's keys in order, so errors come in a stable order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// RenderOptions returns what the render of a Runtime into a Shoot gets from the landscape.
func (l *Landscape) RenderOptions(o Options) gardener.RenderOptions {
	c := l.Config.Converter
	out := gardener.RenderOptions{
		Namespace:                  "garden-" + c.Gardener.ProjectName,
		DefaultKubernetesVersion:   c.Kubernetes.DefaultVersion,
		DefaultMachineImage:        c.MachineImage.DefaultName,
		DefaultMachineImageVersion: c.MachineImage.DefaultVersion,
		DefaultOIDC:                c.Kubernetes.DefaultOperatorOidc.runtimeOIDC(),
		DefaultAdditionalOIDC:      l.sharedTenant().runtimeOIDC(),
		KubernetesAutoUpdate:       c.Kubernetes.EnableKubernetesVersionAutoUpdate,
		MachineImageAutoUpdate:     c.Kubernetes.EnableMachineImageVersionAutoUpdate,
		MaintenanceWindows:         l.MaintenanceWindows,
		AuditLog: &gardener.AuditLog{
			PolicyConfigMapName: c.AuditLog.PolicyConfigMapName,
			Tenants:             l.AuditLogTenants,
			Mandatory:           o.AuditLogMandatory,
		},
		Tolerations:                    c.Tolerations,
		KubeAPIServerFeatureGates:      c.Kubernetes.KubeAPIServer.FeatureGates,
		KubeAPIServerRuntimeConfig:     c.Kubernetes.KubeAPIServer.RuntimeConfig,
		KubeletFeatureGates:            c.Kubernetes.Kubelet.FeatureGates,
		AWSIMDSv2:                      c.Provider.AWS.EnableIMDSv2,
		WorkerMachineControllerManager: c.Provider.Worker.machineControllerManager(),
		CredentialsBinding:             c.Gardener.EnableCredentialBinding,
		DualStackDisabled:              !c.Networking.EnableDualStackIP,
		ACL:                            o.ACL,
	}
	// Validated by Load.
	out.MaxTokenExpiration, _ = time.ParseDuration(c.Kubernetes.KubeAPIServer.MaxTokenExpiration)
	if !c.DNS.GardenerInternal() {
		out.DNS = &gardener.DNS{SecretName: c.DNS.SecretName, DomainPrefix: c.DNS.DomainPrefix, ProviderType: c.DNS.ProviderType}
	}
	return out
}

// sharedTenant is the shared identity tenant: under cluster, or under converter.kubernetes in
// older files.
func (l *Landscape) sharedTenant() *OIDCProvider {
	if t := l.Config.Cluster.DefaultSharedIASTenant; t != nil {
		return t
	}
	return l.Config.Converter.Kubernetes.DefaultSharedIASTenant
}

// ACLConfigMapName is the ConfigMap with the ACL addresses; empty when the file names none.
func (l *Landscape) ACLConfigMapName() string {
	return l.Config.Converter.Kubernetes.KubeAPIServer.ACL.ConfigMapName
}

// runtimeOIDC converts the file's provider into the Runtime API's; nil stays nil.
func (p *OIDCProvider) runtimeOIDC() *infrav1.OIDCConfig {
	if p == nil {
		return nil
	}
	out := &infrav1.OIDCConfig{
		ClientID:      &p.ClientID,
		IssuerURL:     &p.IssuerURL,
		UsernameClaim: &p.UsernameClaim,
		SigningAlgs:   p.SigningAlgs,
	}
	if p.GroupsClaim != "" {
		out.GroupsClaim = &p.GroupsClaim
	}
	if p.UsernamePrefix != "" {
		out.UsernamePrefix = &p.UsernamePrefix
	}
	return out
}
