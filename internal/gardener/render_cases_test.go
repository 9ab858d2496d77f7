package gardener

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// testOptions are the options the tests render with.
var testOptions = RenderOptions{
	Namespace:                  "garden-kyma",
	DefaultKubernetesVersion:   "1.30.5",
	DefaultMachineImage:        "gardenlinux",
	DefaultMachineImageVersion: "1592.1.0",
}

// TestRenderFixtures renders every upstream Runtime manifest and checks the rendered
// fields one by one.
func TestRenderFixtures(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name is the fixture file in upstream-runtimes.
		name string
		// shootName is the expected shoot name.
		shootName string
		// region is the expected hyperscaler region.
		region string
		// providerType is the expected spec.provider.type.
		providerType string
		// cloudProfile is the expected spec.cloudProfileName.
		cloudProfile string
		// pods, nodes and services are the expected CIDRs.
		pods, nodes, services string
		// workerName is the expected name of the only worker pool.
		workerName string
		// machineType is the expected machine type of that pool.
		machineType string
		// zones are the expected zones of that pool.
		zones []string
		// volumeType is the expected root disk type of that pool.
		volumeType string
	}{
		{
			name: "aws.yaml", shootName: "aws-full", region: "eu-central-1",
			providerType: "aws", cloudProfile: "aws",
			pods: "100.64.0.0/12", nodes: "10.250.0.0/16", services: "100.104.0.0/13",
			workerName: "worker-0", machineType: "m6i.large",
			zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}, volumeType: "gp2",
		},
		{
			name: "azure.yaml", shootName: "azure-full", region: "eastus",
			providerType: "azure", cloudProfile: "az",
			pods: "10.96.0.0/13", nodes: "10.250.0.0/22", services: "10.104.0.0/13",
			workerName: "worker-0", machineType: "Standard_D2s_v5",
			zones: []string{"1", "2", "3"}, volumeType: "Standard_LRS",
		},
		{
			name: "gcp.yaml", shootName: "gcp-full", region: "us-central1",
			providerType: "gcp", cloudProfile: "gcp",
			pods: "10.96.0.0/13", nodes: "10.250.0.0/22", services: "10.104.0.0/13",
			workerName: "cpu-worker-0", machineType: "n2-standard-2",
			zones: []string{"us-central1-a", "us-central1-b", "us-central1-c"}, volumeType: "pd-standard",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := readFixture(t, tt.name)

			shoot, err := shootFromRuntime(rt, testOptions)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}

			expectEqual(t, "apiVersion", shoot.APIVersion, "core.gardener.cloud/v1beta1")
			expectEqual(t, "kind", shoot.Kind, "Shoot")
			expectEqual(t, "name", shoot.Name, tt.shootName)
			expectEqual(t, "namespace", shoot.Namespace, "garden-kyma")
			expectEqual(t, "label runtime-id", shoot.Labels[infrav1.LabelRuntimeID], "runtime-id")
			expectEqual(t, "label instance-id", shoot.Labels[infrav1.LabelInstanceID], "instance-id")
			expectEqual(t, "label global-account-id", shoot.Labels[infrav1.LabelGlobalAccountID], "global-account-id")
			expectEqual(t, "label subaccount-id", shoot.Labels[infrav1.LabelSubaccountID], "subAccount-id")
			expectEqual(t, "label shoot-name", shoot.Labels[infrav1.LabelShootName], tt.shootName)
			expectEqual(t, "label region", shoot.Labels[infrav1.LabelRegion], "region")
			expectEqual(t, "label broker-plan-name", shoot.Labels[infrav1.LabelBrokerPlanName], "plan-name")
			expectEqual(t, "annotation runtime-id", shoot.Annotations[AnnotationRuntimeID], "runtime-id")

			spec := shoot.Spec
			expectPtr(t, "purpose", spec.Purpose, gardencorev1beta1.ShootPurposeProduction)
			expectEqual(t, "region", spec.Region, tt.region)
			expectPtr(t, "secretBindingName", spec.SecretBindingName, "hyperscaler secret") //nolint:staticcheck // SA1019: the field the render sets below Kubernetes 1.34.
			expectEqual(t, "cloudProfile", *spec.CloudProfile, gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: tt.cloudProfile})
			expectEqual(t, "kubernetes.version", spec.Kubernetes.Version, "1.28.7")

			if shootOIDC(shoot) != nil {
				t.Error("kubeAPIServer.oidcConfig is set; Gardener forbids it from Kubernetes 1.32 on")
			}
			expectDeepEqual(t, "structuredAuthentication", shoot.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication,
				&gardencorev1beta1.StructuredAuthentication{ConfigMapName: "structured-auth-config-" + tt.shootName})

			if spec.Networking == nil {
				t.Fatal("networking is nil")
			}
			expectPtr(t, "networking.type", spec.Networking.Type, "calico")
			expectPtr(t, "networking.pods", spec.Networking.Pods, tt.pods)
			expectPtr(t, "networking.nodes", spec.Networking.Nodes, tt.nodes)
			expectPtr(t, "networking.services", spec.Networking.Services, tt.services)

			expectEqual(t, "provider.type", spec.Provider.Type, tt.providerType)
			if len(spec.Provider.Workers) != 1 {
				t.Fatalf("got %d workers, want 1", len(spec.Provider.Workers))
			}
			w := spec.Provider.Workers[0]
			expectEqual(t, "worker.name", w.Name, tt.workerName)
			expectEqual(t, "worker.machine.type", w.Machine.Type, tt.machineType)
			if w.Machine.Image == nil {
				t.Fatal("worker.machine.image is nil")
			}
			expectEqual(t, "worker.machine.image.name", w.Machine.Image.Name, "gardenlinux")
			expectPtr(t, "worker.machine.image.version", w.Machine.Image.Version, "1443.9.0")
			expectEqual(t, "worker.minimum", w.Minimum, int32(3))
			expectEqual(t, "worker.maximum", w.Maximum, int32(20))
			expectPtr(t, "worker.maxSurge", w.MaxSurge, intstr.FromInt32(3))
			expectPtr(t, "worker.maxUnavailable", w.MaxUnavailable, intstr.FromInt32(0))
			expectDeepEqual(t, "worker.zones", w.Zones, tt.zones)
			if w.Volume == nil {
				t.Fatal("worker.volume is nil")
			}
			expectPtr(t, "worker.volume.type", w.Volume.Type, tt.volumeType)
			expectEqual(t, "worker.volume.size", w.Volume.VolumeSize, "50Gi")
			expectPtr(t, "worker.cri.name", criName(w), gardencorev1beta1.CRINameContainerD)

			if spec.ControlPlane == nil || spec.ControlPlane.HighAvailability == nil {
				t.Fatal("controlPlane.highAvailability is nil")
			}
			expectEqual(t, "failureTolerance.type", spec.ControlPlane.HighAvailability.FailureTolerance.Type,
				gardencorev1beta1.FailureToleranceTypeZone)
			if spec.SeedSelector == nil {
				t.Fatal("seedSelector is nil")
			}
			expectDeepEqual(t, "seedSelector.matchLabels", spec.SeedSelector.MatchLabels,
				map[string]string{LabelSeedRegion: tt.region})
			expectDeepEqual(t, "maintenance.autoUpdate", spec.Maintenance.AutoUpdate,
				&gardencorev1beta1.MaintenanceAutoUpdate{KubernetesVersion: false, MachineImageVersion: ptr.To(false)})
			// Every fixture disables the egress filter, enables the ingress filter and sets no ACL;
			// without a landscape configuration it gets Gardener's DNS and shoot issuers.
			expectDeepEqual(t, "extensions", spec.Extensions, []gardencorev1beta1.Extension{
				{Type: ExtensionNetworkingFilter, Disabled: ptr.To(true), ProviderConfig: &runtime.RawExtension{Raw: []byte(blackholingOn)}},
				{Type: ExtensionOIDCService, Disabled: ptr.To(false)},
				{Type: ExtensionDNS, ProviderConfig: &runtime.RawExtension{Raw: []byte(gardenerDNS)}},
				{Type: ExtensionCert, ProviderConfig: &runtime.RawExtension{Raw: []byte(shootIssuers)}},
			})

			encoded, err := json.Marshal(shoot)
			if err != nil {
				t.Fatal(err)
			}
			var typeMeta metav1.TypeMeta
			if err := json.Unmarshal(encoded, &typeMeta); err != nil {
				t.Fatal(err)
			}
			expectEqual(t, "encoded apiVersion", typeMeta.APIVersion, "core.gardener.cloud/v1beta1")
			expectEqual(t, "encoded kind", typeMeta.Kind, "Shoot")
		})
	}
}

// TestRender checks the rules that the fixtures do not exercise.
func TestRender(t *testing.T) {
	t.Parallel()

	tests := []struct {
		// name describes the case.
		name string
		// mutate changes the base Runtime before the conversion; nil keeps it.
		mutate func(rt *infrav1.Runtime)
		// nilRuntime renders a nil Runtime instead.
		nilRuntime bool
		// opts replace testOptions when set.
		opts *RenderOptions
		// wantReason is the reason of the expected terminal error; empty when none is expected.
		wantReason string
		// wantErr is the sentinel the expected error wraps.
		wantErr error
		// check inspects the rendered Shoot when no error is expected.
		check func(t *testing.T, shoot *gardencorev1beta1.Shoot)
	}{
		{
			name:   "missing kubernetes version uses the default",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = nil },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "kubernetes.version", shoot.Spec.Kubernetes.Version, "1.30.5")
			},
		},
		{
			name:   "empty kubernetes version uses the default",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Kubernetes.Version = ptr.To("") },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "kubernetes.version", shoot.Spec.Kubernetes.Version, "1.30.5")
			},
		},
		{
			name: "runtime kubernetes version wins over the default",
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "kubernetes.version", shoot.Spec.Kubernetes.Version, "1.31.2")
			},
		},
		{
			name:       "unknown provider is terminal",
			mutate:     func(rt *infrav1.Runtime) { rt.Spec.Shoot.Provider.Type = "ironcore" },
			wantReason: ReasonUnsupportedProvider,
			wantErr:    ErrUnsupportedProvider,
		},
		{
			name:       "nil runtime is terminal",
			nilRuntime: true,
			wantReason: ReasonInvalidRuntime,
			wantErr:    ErrInvalidRuntime,
		},
		{
			name:       "empty shoot name is terminal",
			mutate:     func(rt *infrav1.Runtime) { rt.Spec.Shoot.Name = "" },
			wantReason: ReasonInvalidRuntime,
			wantErr:    ErrInvalidRuntime,
		},
		{
			name:       "empty namespace is terminal",
			opts:       &RenderOptions{DefaultKubernetesVersion: "1.30.5"},
			wantReason: ReasonInvalidRenderOptions,
			wantErr:    ErrMissingNamespace,
		},
		{
			name: "additional workers are appended",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.AdditionalWorkers = &[]infrav1.Worker{
					{Name: "extra-1", Machine: infrav1.Machine{Type: "m6i.xlarge"}, Minimum: 1, Maximum: 2, Zones: []string{"eu-central-1a"}},
					{Name: "extra-2", Machine: infrav1.Machine{Type: "m6i.2xlarge"}, Minimum: 0, Maximum: 4, Zones: []string{"eu-central-1b"}},
				}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				var names []string
				for _, w := range shoot.Spec.Provider.Workers {
					names = append(names, w.Name)
				}
				expectDeepEqual(t, "worker names", names, []string{"worker-0", "extra-1", "extra-2"})
				extra := shoot.Spec.Provider.Workers[2]
				expectEqual(t, "extra-2 machine type", extra.Machine.Type, "m6i.2xlarge")
				expectEqual(t, "extra-2 maximum", extra.Maximum, int32(4))
				expectDeepEqual(t, "extra-2 zones", extra.Zones, []string{"eu-central-1b"})
			},
		},
		{
			name: "raw provider configs pass through byte-equal",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(infraConfig)}
				rt.Spec.Shoot.Provider.ControlPlaneConfig = &runtime.RawExtension{Raw: []byte(controlPlaneConfig)}
				rt.Spec.Shoot.Provider.Workers[0].ProviderConfig = &runtime.RawExtension{Raw: []byte(workerConfig)}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				p := shoot.Spec.Provider
				expectRaw(t, "infrastructureConfig", p.InfrastructureConfig, infraConfig)
				expectRaw(t, "controlPlaneConfig", p.ControlPlaneConfig, controlPlaneConfig)
				expectRaw(t, "worker providerConfig", p.Workers[0].ProviderConfig, workerConfig)
			},
		},
		{
			name: "absent provider configs are generated for the provider",
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectAPIVersion(t, "infrastructureConfig", shoot.Spec.Provider.InfrastructureConfig, "aws.provider.extensions.gardener.cloud/v1alpha1", "InfrastructureConfig")
				expectAPIVersion(t, "controlPlaneConfig", shoot.Spec.Provider.ControlPlaneConfig, "aws.provider.extensions.gardener.cloud/v1alpha1", "ControlPlaneConfig")
				expectNil(t, "worker providerConfig", shoot.Spec.Provider.Workers[0].ProviderConfig)
			},
		},
		{
			name:   "missing image uses the default image and version",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Provider.Workers[0].Machine.Image = nil },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectDeepEqual(t, "image", shoot.Spec.Provider.Workers[0].Machine.Image,
					&gardencorev1beta1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To("1592.1.0")})
			},
		},
		{
			name: "default image without version gets the default version",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].Machine.Image = &infrav1.ShootMachineImage{Name: "gardenlinux"}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectDeepEqual(t, "image", shoot.Spec.Provider.Workers[0].Machine.Image,
					&gardencorev1beta1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To("1592.1.0")})
			},
		},
		{
			name: "other image without version is left for Gardener to default",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Workers[0].Machine.Image = &infrav1.ShootMachineImage{Name: "ubuntu"}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectDeepEqual(t, "image", shoot.Spec.Provider.Workers[0].Machine.Image,
					&gardencorev1beta1.ShootMachineImage{Name: "ubuntu"})
			},
		},
		{
			name:   "no image and no default image leaves the image out",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Provider.Workers[0].Machine.Image = nil },
			opts:   &RenderOptions{Namespace: "garden-kyma"},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectNil(t, "image", shoot.Spec.Provider.Workers[0].Machine.Image)
			},
		},
		{
			name: "architecture, encryption and surge percentages are copied",
			mutate: func(rt *infrav1.Runtime) {
				w := &rt.Spec.Shoot.Provider.Workers[0]
				w.Machine.Architecture = ptr.To("arm64")
				w.Volume.Encrypted = ptr.To(true)
				w.MaxSurge = ptr.To(intstr.FromString("25%"))
				w.CRI = &infrav1.CRI{Name: "containerd"}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				w := shoot.Spec.Provider.Workers[0]
				expectPtr(t, "architecture", w.Machine.Architecture, "arm64")
				expectPtr(t, "volume.encrypted", w.Volume.Encrypted, true)
				expectPtr(t, "maxSurge", w.MaxSurge, intstr.FromString("25%"))
				expectPtr(t, "cri.name", criName(w), gardencorev1beta1.CRINameContainerD)
			},
		},
		{
			name:   "networking type defaults to calico",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Networking.Type = nil },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectPtr(t, "networking.type", shoot.Spec.Networking.Type, "calico")
			},
		},
		{
			name:   "networking type cilium is kept",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Networking.Type = ptr.To("cilium") },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectPtr(t, "networking.type", shoot.Spec.Networking.Type, "cilium")
			},
		},
		{
			name: "azure uses the az cloud profile",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Type = "azure"
				rt.Spec.Shoot.Provider.Workers[0].Zones = []string{"1", "2", "3"}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "provider.type", shoot.Spec.Provider.Type, "azure")
				expectCloudProfile(t, shoot, "az")
			},
		},
		{
			name:   "openstack uses the converged-cloud-kyma cloud profile",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Provider.Type = "openstack" },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "provider.type", shoot.Spec.Provider.Type, "openstack")
				expectCloudProfile(t, shoot, "converged-cloud-kyma")
			},
		},
		{
			name:   "seed selector only when the seed location is enforced",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.EnforceSeedLocation = ptr.To(false) },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectNil(t, "seedSelector", shoot.Spec.SeedSelector)
			},
		},
		{
			name:   "enabled egress filter is not disabled",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Security.Networking.Filter.Egress.Enabled = true },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectDeepEqual(t, "extensions", shoot.Spec.Extensions, []gardencorev1beta1.Extension{
					{Type: ExtensionNetworkingFilter, Disabled: ptr.To(false), ProviderConfig: &runtime.RawExtension{Raw: []byte(blackholingOff)}},
					{Type: ExtensionOIDCService, Disabled: ptr.To(false)},
					{Type: ExtensionDNS, ProviderConfig: &runtime.RawExtension{Raw: []byte(gardenerDNS)}},
					{Type: ExtensionCert, ProviderConfig: &runtime.RawExtension{Raw: []byte(shootIssuers)}},
				})
			},
		},
		{
			name: "enabled ingress filter turns blackholing on",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Security.Networking.Filter = infrav1.Filter{Egress: infrav1.Egress{Enabled: true}, Ingress: &infrav1.Ingress{Enabled: true}}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				filter := extension(t, shoot, ExtensionNetworkingFilter)
				expectPtr(t, "networking filter disabled", filter.Disabled, false)
				expectRaw(t, "networking filter providerConfig", filter.ProviderConfig, blackholingOn)
			},
		},
		{
			name: "disabled ingress filter turns blackholing off explicitly",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Security.Networking.Filter.Ingress = &infrav1.Ingress{Enabled: false}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectRaw(t, "networking filter providerConfig", extension(t, shoot, ExtensionNetworkingFilter).ProviderConfig, blackholingOff)
			},
		},
		{
			name: "ACL allows the runtime's networks, the operators' and the control plane's",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.0.0.0/8", "192.168.1.0/24", "198.51.100.0/29"}}
			},
			opts: withACL(&ACL{OperatorCIDRs: []string{"198.51.100.0/29", "203.0.113.16/28"}, ControlPlaneCIDR: "192.0.2.10/32"}),
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				acl := extension(t, shoot, ExtensionACL)
				expectPtr(t, "acl disabled", acl.Disabled, false)
				expectRaw(t, "acl providerConfig", acl.ProviderConfig,
					`{"rule":{"action":"ALLOW","type":"remote_ip","cidrs":["10.0.0.0/8","192.168.1.0/24","198.51.100.0/29","203.0.113.16/28","192.0.2.10/32"]}}`)
			},
		},
		{
			name: "ACLs on and a runtime without networks: the acl extension is disabled",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = nil
			},
			opts: withACL(&ACL{}),
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				acl := extension(t, shoot, ExtensionACL)
				expectPtr(t, "acl disabled", acl.Disabled, true)
				expectNil(t, "acl providerConfig", acl.ProviderConfig)
			},
		},
		{
			name: "ACLs on and a provider the extension does not serve: no acl extension",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Provider.Type = "gcp"
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.0.0.0/8"}}
			},
			opts:  withACL(&ACL{}),
			check: expectNoExtension(ExtensionACL),
		},
		{
			name: "ACLs off: no acl extension, even when the runtime asks",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.ACL = &infrav1.ACL{AllowedCIDRs: []string{"10.0.0.0/8"}}
			},
			check: expectNoExtension(ExtensionACL),
		},
		{
			name: "the main OIDC provider goes into structured authentication, never oidcConfig",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = fullOIDC()
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectNil(t, "oidcConfig", shootOIDC(shoot))
				expectDeepEqual(t, "structuredAuthentication", shoot.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication,
					&gardencorev1beta1.StructuredAuthentication{ConfigMapName: "structured-auth-config-c-1"})
			},
		},
		{
			name: "no OIDC config leaves structured authentication out",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.Kubernetes.KubeAPIServer = infrav1.APIServer{ACL: &infrav1.ACL{AllowedCIDRs: []string{"10.0.0.0/8"}}}
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectNil(t, "structuredAuthentication", shoot.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication)
			},
		},
		{
			name:   "no high availability leaves controlPlane out",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.ControlPlane = nil },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectNil(t, "controlPlane", shoot.Spec.ControlPlane)
			},
		},
		{
			name: "node failure tolerance",
			mutate: func(rt *infrav1.Runtime) {
				rt.Spec.Shoot.ControlPlane.HighAvailability.FailureTolerance.Type = "node"
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "failureTolerance.type", shoot.Spec.ControlPlane.HighAvailability.FailureTolerance.Type,
					gardencorev1beta1.FailureToleranceTypeNode)
			},
		},
		{
			name: "extra labels are set and runtime labels win",
			opts: &RenderOptions{
				Namespace: "garden-kyma",
				Labels:    map[string]string{"managed-by": "infrastructure-manager", infrav1.LabelRuntimeID: "spoofed"},
			},
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "label managed-by", shoot.Labels["managed-by"], "infrastructure-manager")
				expectEqual(t, "label runtime-id", shoot.Labels[infrav1.LabelRuntimeID], "rt-1")
				if _, ok := shoot.Labels[infrav1.LabelKymaName]; ok {
					t.Errorf("label %s was copied, want only the runtime identity labels", infrav1.LabelKymaName)
				}
			},
		},
		{
			name:   "licence type becomes an annotation",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.LicenceType = ptr.To("TestDevelopmentAndDemo") },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectEqual(t, "annotation licence-type", shoot.Annotations[AnnotationLicenceType], "TestDevelopmentAndDemo")
			},
		},
		{
			name:   "empty purpose is left out",
			mutate: func(rt *infrav1.Runtime) { rt.Spec.Shoot.Purpose = "" },
			check: func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
				expectNil(t, "purpose", shoot.Spec.Purpose)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := baseRuntime()
			if tt.mutate != nil {
				tt.mutate(rt)
			}
			if tt.nilRuntime {
				rt = nil
			}
			opts := testOptions
			if tt.opts != nil {
				opts = *tt.opts
			}

			shoot, err := shootFromRuntime(rt, opts)

			if tt.wantReason != "" {
				if err == nil {
					t.Fatal("got no error, want a terminal one")
				}
				c := retry.Classify(err)
				if c.Class != retry.ClassTerminal || c.Reason != tt.wantReason {
					t.Errorf("classification = %s/%s, want %s/%s", c.Class, c.Reason, retry.ClassTerminal, tt.wantReason)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v does not wrap %v", err, tt.wantErr)
				}
				if shoot != nil {
					t.Errorf("got a shoot with the error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			tt.check(t, shoot)
		})
	}
}

// withACL returns testOptions with API server ACLs on.
func withACL(acl *ACL) *RenderOptions {
	o := testOptions
	o.ACL = acl
	return &o
}

// expectNoExtension checks that the shoot lists no extension of type typ.
func expectNoExtension(typ string) func(*testing.T, *gardencorev1beta1.Shoot) {
	return func(t *testing.T, shoot *gardencorev1beta1.Shoot) {
		t.Helper()
		for _, e := range shoot.Spec.Extensions {
			if e.Type == typ {
				t.Errorf("extensions list %s, want it left out", typ)
			}
		}
	}
}

// TestRenderSharesNoMemory changes the rendered Shoot and checks the Runtime is
// untouched.
func TestRenderSharesNoMemory(t *testing.T) {
	t.Parallel()
	rt := baseRuntime()
	rt.Spec.Shoot.Kubernetes.KubeAPIServer.OidcConfig = fullOIDC()
	rt.Spec.Shoot.Provider.InfrastructureConfig = &runtime.RawExtension{Raw: []byte(infraConfig)}
	want := rt.DeepCopy()

	shoot, err := shootFromRuntime(rt, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	w := &shoot.Spec.Provider.Workers[0]
	w.Zones[0] = "changed"
	*w.MaxSurge = intstr.FromInt32(99)
	*w.Volume.Type = "changed"
	*w.Machine.Image.Version = "changed"
	shoot.Spec.Provider.InfrastructureConfig.Raw[0] = 'X'

	if !reflect.DeepEqual(rt, want) {
		t.Errorf("changing the shoot changed the runtime")
	}
}

// Raw provider configs, in the shape of real provider extension configs.
const (
	infraConfig        = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig","networks":{"vpc":{"cidr":"10.250.0.0/16"}}}`
	controlPlaneConfig = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"ControlPlaneConfig"}`
	workerConfig       = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"WorkerConfig","volume":{"iops":3000}}`
)

// baseRuntime is a valid AWS Runtime for the table cases.
func baseRuntime() *infrav1.Runtime {
	return &infrav1.Runtime{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "rt-1",
			Namespace: "kcp-system",
			Labels: map[string]string{
				infrav1.LabelRuntimeID:       "rt-1",
				infrav1.LabelInstanceID:      "instance-1",
				infrav1.LabelShootName:       "c-1",
				infrav1.LabelRegion:          "cf-eu10",
				infrav1.LabelBrokerPlanID:    "plan-id",
				infrav1.LabelBrokerPlanName:  "aws",
				infrav1.LabelGlobalAccountID: "ga-1",
				infrav1.LabelSubaccountID:    "sa-1",
				infrav1.LabelKymaName:        "kyma-1",
			},
		},
		Spec: infrav1.RuntimeSpec{
			Shoot: infrav1.RuntimeShoot{
				Name:                "c-1",
				Purpose:             "production",
				PlatformRegion:      "cf-eu10",
				Region:              "eu-central-1",
				SecretBindingName:   "aws-secret",
				EnforceSeedLocation: ptr.To(true),
				Kubernetes: infrav1.Kubernetes{
					Version: ptr.To("1.31.2"),
					KubeAPIServer: infrav1.APIServer{
						OidcConfig: infrav1.OIDCConfig{ClientID: ptr.To("client"), IssuerURL: ptr.To("https://issuer.example.com")},
					},
				},
				Provider: infrav1.Provider{
					Type: "aws",
					Workers: []infrav1.Worker{{
						Name: "worker-0",
						Machine: infrav1.Machine{
							Type:  "m6i.large",
							Image: &infrav1.ShootMachineImage{Name: "gardenlinux", Version: ptr.To("1443.9.0")},
						},
						Minimum:        3,
						Maximum:        20,
						MaxSurge:       ptr.To(intstr.FromInt32(3)),
						MaxUnavailable: ptr.To(intstr.FromInt32(0)),
						Volume:         &infrav1.Volume{Type: ptr.To("gp3"), Size: "80Gi"},
						Zones:          []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"},
					}},
				},
				Networking: infrav1.Networking{
					Type:     ptr.To("calico"),
					Pods:     "100.64.0.0/12",
					Nodes:    "10.250.0.0/16",
					Services: "100.104.0.0/13",
				},
				ControlPlane: &infrav1.ControlPlane{
					HighAvailability: &infrav1.HighAvailability{FailureTolerance: infrav1.FailureTolerance{Type: "zone"}},
				},
			},
			Security: infrav1.Security{
				Administrators: []string{"admin@example.com"},
				Networking:     infrav1.NetworkingSecurity{Filter: infrav1.Filter{Egress: infrav1.Egress{Enabled: false}}},
			},
		},
	}
}

// The networking filter's providerConfig with blackholing (the ingress filter) on and off.
const (
	blackholingOn  = `{"apiVersion":"shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1","kind":"Configuration","egressFilter":{"blackholingEnabled":true}}`
	blackholingOff = `{"apiVersion":"shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1","kind":"Configuration","egressFilter":{"blackholingEnabled":false}}`
	// gardenerDNS is the DNS extension of a shoot on Gardener's default domain.
	gardenerDNS = `{"apiVersion":"service.dns.extensions.gardener.cloud/v1alpha1","kind":"DNSConfig","syncProvidersFromShootSpecDNS":true}`
	// shootIssuers is the certificate extension with issuers in the shoot.
	shootIssuers = `{"apiVersion":"service.cert.extensions.gardener.cloud/v1alpha1","kind":"CertConfig","shootIssuers":{"enabled":true}}`
)

// extension returns the shoot's extension of the given type, failing the test when it is absent.
func extension(t *testing.T, shoot *gardencorev1beta1.Shoot, typ string) gardencorev1beta1.Extension {
	t.Helper()
	for _, e := range shoot.Spec.Extensions {
		if e.Type == typ {
			return e
		}
	}
	t.Fatalf("shoot lists no %s extension; it lists %v", typ, shoot.Spec.Extensions)
	return gardencorev1beta1.Extension{}
}

// fullOIDC sets every OIDC field.
func fullOIDC() infrav1.OIDCConfig {
	return infrav1.OIDCConfig{
		CABundle:       ptr.To(testCA),
		ClientID:       ptr.To("client"),
		GroupsClaim:    ptr.To("groups"),
		GroupsPrefix:   ptr.To("oidc:"),
		IssuerURL:      ptr.To("https://issuer.example.com"),
		RequiredClaims: map[string]string{"aud": "kyma"},
		SigningAlgs:    []string{"RS256", "ES256"},
		UsernameClaim:  ptr.To("email"),
		UsernamePrefix: ptr.To("-"),
	}
}

// readFixture decodes an upstream Runtime manifest strictly.
func readFixture(t *testing.T, name string) *infrav1.Runtime {
	t.Helper()
	return testenv.ReadRuntime(t, filepath.Join(testenv.FixturesDir(), "upstream-runtimes", name))
}

// expectCloudProfile checks the shoot references the cloud profile by spec.cloudProfile, never
// by the cloudProfileName Gardener forbids from Kubernetes 1.34 on.
func expectCloudProfile(t *testing.T, shoot *gardencorev1beta1.Shoot, name string) {
	t.Helper()
	expectNil(t, "cloudProfileName", shoot.Spec.CloudProfileName) //nolint:staticcheck // SA1019: checking the render never sets it.
	if shoot.Spec.CloudProfile == nil {
		t.Fatalf("cloudProfile is nil, want %s", name)
	}
	expectEqual(t, "cloudProfile", *shoot.Spec.CloudProfile, gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: name})
}

// shootFromRuntime renders rt as a new shoot and returns only the Shoot.
func shootFromRuntime(rt *infrav1.Runtime, opts RenderOptions) (*gardencorev1beta1.Shoot, error) {
	r, err := Render(rt, nil, opts)
	return r.Shoot, err
}

// expectAPIVersion checks the apiVersion and kind of a provider config.
func expectAPIVersion(t *testing.T, field string, got *runtime.RawExtension, apiVersion, kind string) {
	t.Helper()
	if got == nil {
		t.Errorf("%s is nil, want a %s %s", field, apiVersion, kind)
		return
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(got.Raw, &tm); err != nil {
		t.Errorf("%s does not decode: %v", field, err)
		return
	}
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		t.Errorf("%s is %s %s, want %s %s", field, tm.APIVersion, tm.Kind, apiVersion, kind)
	}
}

// shootOIDC is the shoot's legacy OIDC provider, nil when it has none.
func shootOIDC(shoot *gardencorev1beta1.Shoot) *gardencorev1beta1.OIDCConfig {
	if shoot.Spec.Kubernetes.KubeAPIServer == nil {
		return nil
	}
	return shoot.Spec.Kubernetes.KubeAPIServer.OIDCConfig //nolint:staticcheck // SA1019: the tests check the render never sets it.
}

// criName is the worker's CRI name, nil when the worker has no CRI.
func criName(w gardencorev1beta1.Worker) *gardencorev1beta1.CRIName {
	if w.CRI == nil {
		return nil
	}
	return &w.CRI.Name
}

func expectEqual[T comparable](t *testing.T, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", field, got, want)
	}
}

func expectPtr[T comparable](t *testing.T, field string, got *T, want T) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %v", field, want)
		return
	}
	if *got != want {
		t.Errorf("%s = %v, want %v", field, *got, want)
	}
}

func expectNil[T any](t *testing.T, field string, got *T) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %+v, want nil", field, *got)
	}
}

func expectDeepEqual(t *testing.T, field string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", field, got, want)
	}
}

func expectRaw(t *testing.T, field string, got *runtime.RawExtension, want string) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %s", field, want)
		return
	}
	if !bytes.Equal(got.Raw, []byte(want)) {
		t.Errorf("%s = %s, want %s", field, got.Raw, want)
	}
}

// testCA is a self-signed certificate, so CA bundles pass Kubernetes' validation of an
// AuthenticationConfiguration, which parses them.
const testCA = `-----BEGIN CERTIFICATE-----
MIIBezCCASGgAwIBAgIBATAKBggqhkjOPQQDAjAlMSMwIQYDVQQDExppc3N1ZXIu
ZXhhbXBsZS5jb20gdGVzdCBDQTAeFw0yNjAxMDEwMDAwMDBaFw00NjAxMDEwMDAw
MDBaMCUxIzAhBgNVBAMTGmlzc3Vlci5leGFtcGxlLmNvbSB0ZXN0IENBMFkwEwYH
KoZIzj0CAQYIKoZIzj0DAQcDQgAEM+5rZaVO9L6OtgRPVBLhURJ7WygZr/EnVnrl
ID/T9qcGtR0mubLZ67dTf82PL0/iRV4RYRNyol6cYYt59fJ8fKNCMEAwDgYDVR0P
AQH/BAQDAgIEMA8GA1UdEwEB/wQFMAMBAf8wHQYDVR0OBBYEFLeExb8FsHRvjfAl
ttVWbGr0j+6QMAoGCCqGSM49BAMCA0gAMEUCIQC8aJSEAib9hmmD0iD+okHl8ZPT
JznqSelt/MyvFRtuMwIgZ0T5/t476CmofFYCoG0qfCCJWOjW//SJ1oIKrJIA4SA=
-----END CERTIFICATE-----
`
