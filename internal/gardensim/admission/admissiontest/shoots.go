package admissiontest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/cloudprofiles"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/controllerregistrations"
)

// Providers are the provider types ValidShoot knows.
var Providers = []string{"aws", "azure", "gcp", "openstack", "alicloud"}

// KubernetesVersion is the version of valid shoots: supported in every
// profile.
const KubernetesVersion = "1.33.4"

// ImageVersion is the gardenlinux version of valid shoots.
const ImageVersion = "1592.4.0"

// cloudCredentials are the keys of each provider's cloud provider Secret, with values of the
// shape the provider extensions' validators check.
var cloudCredentials = map[string]map[string]string{
	"aws":       {"accessKeyID": "AKIAIOSFODNN7EXAMPLE", "secretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	"azure":     {"clientID": "00000000-0000-0000-0000-000000000001", "clientSecret": "secret", "subscriptionID": "00000000-0000-0000-0000-000000000002", "tenantID": "00000000-0000-0000-0000-000000000003"},
	"gcp":       {"serviceaccount.json": `{"type":"service_account","project_id":"sim-project"}`},
	"openstack": {"domainName": "kyma", "tenantName": "kyma-test", "username": "user", "password": "password"},
	"alicloud":  {"accessKeyID": "LTAIexampleexample", "accessKeySecret": "secretsecretsecretsecret"},
}

// CloudCredentials returns the string data of a cloud provider Secret of the provider type that
// the provider's extension accepts (the openstack extension reads it when it validates a
// shoot), nil for an unknown provider.
func CloudCredentials(provider string) map[string]string {
	return maps.Clone(cloudCredentials[provider])
}

// fixture is what differs between providers.
type fixture struct {
	profile, region, machine, volume, zone string
	infra, controlPlane                    string
	pods, services                         string
}

// fixtures hold one valid shoot per provider. The provider configs are
// compact JSON with sorted keys, as the garden API server stores them.
var fixtures = map[string]fixture{
	"aws": {
		profile: "aws", region: "eu-central-1", machine: "m6i.large", volume: "gp3", zone: "eu-central-1a",
		infra: `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"internal":"10.250.48.0/20","name":"eu-central-1a","public":"10.250.32.0/20","workers":"10.250.0.0/19"}]}}`,
	},
	"azure": {
		profile: "az", region: "westeurope", machine: "Standard_D2s_v5", volume: "StandardSSD_LRS", zone: "1",
		infra: `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vnet":{"cidr":"10.250.0.0/16"},"zones":[{"cidr":"10.250.0.0/19","name":1}]},"zoned":true}`,
	},
	"gcp": {
		profile: "gcp", region: "europe-west3", machine: "n2-standard-2", volume: "pd-balanced", zone: "europe-west3-a",
		infra:        `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/16"}}`,
		controlPlane: `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"ControlPlaneConfig","zone":"europe-west3-a"}`,
	},
	"openstack": {
		profile: "converged-cloud-kyma", region: "eu-de-1", machine: "g_c2_m8", zone: "eu-de-1a",
		infra:        `{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","floatingPoolName":"FloatingIP-external-kyma-01","kind":"InfrastructureConfig","networks":{"workers":"10.250.0.0/16"}}`,
		controlPlane: `{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","kind":"ControlPlaneConfig","loadBalancerProvider":"f5"}`,
	},
	"alicloud": {
		profile: "alicloud", region: "eu-central-1", machine: "ecs.g7.large", volume: "cloud_essd", zone: "eu-central-1a",
		infra: `{"apiVersion":"alicloud.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"name":"eu-central-1a","workers":"10.250.0.0/19"}]}}`,
		// Alicloud reserves 100.64.0.0/10.
		pods: "10.96.0.0/13", services: "10.104.0.0/13",
	},
}

// ValidShoot returns a shoot of the given provider type that Gardener and
// the provider's extension admit: a profile the simulator serves, one
// worker pool in one zone of a region with a ready seed, a Kubernetes
// version and image the profile offers, and an infrastructureConfig whose
// zone networks lie inside spec.networking.nodes (10.250.0.0/16). It panics
// for an unknown provider.
func ValidShoot(provider, name, namespace string) *gardencorev1beta1.Shoot {
	f, ok := fixtures[provider]
	if !ok {
		panic(fmt.Sprintf("admissiontest: no valid shoot for provider %q", provider))
	}
	pods, services := "100.64.0.0/12", "100.104.0.0/13"
	if f.pods != "" {
		pods, services = f.pods, f.services
	}
	worker := gardencorev1beta1.Worker{
		Name: "cpu-worker-0",
		Machine: gardencorev1beta1.Machine{
			Type:  f.machine,
			Image: &gardencorev1beta1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To(ImageVersion)},
		},
		Minimum: 1, Maximum: 3,
		Zones: []string{f.zone},
	}
	if f.volume != "" {
		worker.Volume = &gardencorev1beta1.Volume{Type: ptr.To(f.volume), VolumeSize: "50Gi"}
	}
	shoot := &gardencorev1beta1.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: gardencorev1beta1.SchemeGroupVersion.String(), Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: gardencorev1beta1.ShootSpec{
			// A shoot below Kubernetes 1.34 as clients still write it, with
			// the deprecated names Gardener validates and syncs.
			CloudProfileName:  ptr.To(f.profile), //nolint:staticcheck // SA1019: admission resolves and syncs the deprecated profile name; the tests rely on it.
			Region:            f.region,
			SecretBindingName: ptr.To("sb-" + provider), //nolint:staticcheck // SA1019: the deprecated binding Gardener forbids from Kubernetes 1.34, which the tests check.
			Kubernetes:        gardencorev1beta1.Kubernetes{Version: KubernetesVersion},
			Networking: &gardencorev1beta1.Networking{
				Type:     ptr.To("calico"),
				Nodes:    ptr.To("10.250.0.0/16"),
				Pods:     ptr.To(pods),
				Services: ptr.To(services),
			},
			Provider: gardencorev1beta1.Provider{
				Type:                 provider,
				InfrastructureConfig: &runtime.RawExtension{Raw: []byte(f.infra)},
				Workers:              []gardencorev1beta1.Worker{worker},
			},
		},
	}
	if f.controlPlane != "" {
		shoot.Spec.Provider.ControlPlaneConfig = &runtime.RawExtension{Raw: []byte(f.controlPlane)}
	}
	return shoot
}

// Env is an in-memory admission environment.
type Env struct {
	// Profiles are the CloudProfiles by name.
	Profiles map[string]*gardencorev1beta1.CloudProfile
	// Seeds are the Seeds by name.
	Seeds map[string]*gardencorev1beta1.Seed
	// Registrations are the ControllerRegistrations.
	Registrations []gardencorev1beta1.ControllerRegistration
	// ConfigMaps are the ConfigMaps by namespace/name.
	ConfigMaps map[string]*corev1.ConfigMap
	// Secrets are the Secrets by namespace/name.
	Secrets map[string]*corev1.Secret
	// Time is what Now returns.
	Time time.Time
}

// NewEnv returns an Env with the simulator's CloudProfiles and
// ControllerRegistrations, one Seed <provider>-<region> per region of the
// profiles (supporting the region's access restrictions, as the
// simulator's), no ConfigMaps or Secrets, and the time 2026-01-01. It panics
// if the embedded manifests do not parse.
func NewEnv() *Env {
	profiles, err := cloudprofiles.Read()
	if err != nil {
		panic(err)
	}
	registrations, err := controllerregistrations.Read()
	if err != nil {
		panic(err)
	}
	e := &Env{
		Profiles:      map[string]*gardencorev1beta1.CloudProfile{},
		Seeds:         map[string]*gardencorev1beta1.Seed{},
		Registrations: registrations,
		ConfigMaps:    map[string]*corev1.ConfigMap{},
		Secrets:       map[string]*corev1.Secret{},
		Time:          time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := range profiles {
		p := &profiles[i]
		e.Profiles[p.Name] = p
		for _, r := range p.Spec.Regions {
			seed := &gardencorev1beta1.Seed{ObjectMeta: metav1.ObjectMeta{Name: p.Spec.Type + "-" + r.Name}}
			seed.Spec.Provider = gardencorev1beta1.SeedProvider{Type: p.Spec.Type, Region: r.Name}
			seed.Spec.AccessRestrictions = r.AccessRestrictions
			e.Seeds[seed.Name] = seed
		}
	}
	return e
}

// AddConfigMap stores cm.
func (e *Env) AddConfigMap(cm *corev1.ConfigMap) { e.ConfigMaps[cm.Namespace+"/"+cm.Name] = cm }

// AddSecret stores an empty Secret namespace/name.
func (e *Env) AddSecret(namespace, name string) {
	e.Secrets[namespace+"/"+name] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
}

// AddLandscapeObjects stores LandscapeObjects of namespace.
func (e *Env) AddLandscapeObjects(namespace string) {
	secrets, policy := LandscapeObjects(namespace)
	for _, s := range secrets {
		e.Secrets[namespace+"/"+s.Name] = s
	}
	e.AddConfigMap(policy)
}

// Unregister drops every ControllerRegistration resource of kind Extension
// and the given type, as if the garden did not know the extension.
func (e *Env) Unregister(extensionType string) {
	for i := range e.Registrations {
		e.Registrations[i].Spec.Resources = slices.DeleteFunc(e.Registrations[i].Spec.Resources, func(r gardencorev1beta1.ControllerResource) bool {
			return r.Kind == "Extension" && r.Type == extensionType
		})
	}
}

// CloudProfile implements admission.Env.
func (e *Env) CloudProfile(_ context.Context, name string) (*gardencorev1beta1.CloudProfile, error) {
	if p, ok := e.Profiles[name]; ok {
		return p.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(gardencorev1beta1.Resource("cloudprofiles"), name)
}

// Seed implements admission.Env.
func (e *Env) Seed(_ context.Context, name string) (*gardencorev1beta1.Seed, error) {
	if s, ok := e.Seeds[name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(gardencorev1beta1.Resource("seeds"), name)
}

// ControllerRegistrations implements admission.Env.
func (e *Env) ControllerRegistrations(context.Context) ([]gardencorev1beta1.ControllerRegistration, error) {
	out := make([]gardencorev1beta1.ControllerRegistration, len(e.Registrations))
	for i := range e.Registrations {
		e.Registrations[i].DeepCopyInto(&out[i])
	}
	return out, nil
}

// ConfigMap implements admission.Env.
func (e *Env) ConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	if cm, ok := e.ConfigMaps[namespace+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
}

// Secret implements admission.Env.
func (e *Env) Secret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	if s, ok := e.Secrets[namespace+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
}

// Now implements admission.Env.
func (e *Env) Now() time.Time { return e.Time }

// AuthenticationConfigMap is a ConfigMap named structured-auth-config-<shoot>
// holding, under config.yaml, a valid AuthenticationConfiguration
// (apiserver.config.k8s.io/v1beta1) with one JWT issuer.
func AuthenticationConfigMap(shoot, namespace string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "structured-auth-config-" + shoot, Namespace: namespace},
		Data:       map[string]string{"config.yaml": ValidAuthenticationConfig},
	}
}

// ValidAuthenticationConfig is an AuthenticationConfiguration that
// kube-apiserver accepts.
const ValidAuthenticationConfig = `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://kyma.accounts.ondemand.com
    audiences: [kyma]
  claimMappings:
    username:
      claim: sub
      prefix: "oidc:"
`
