package runtime

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// ControllerName names the Runtime controller in metrics and events.
const ControllerName = "runtime"

// Finalizer keeps a Runtime until its shoot is gone.
const Finalizer = "infrastructuremanager.kyma-project.io/runtime"

// UpstreamFinalizer is the finalizer upstream Kyma Infrastructure Manager puts on its Runtimes.
// The controller honours it as its own: it replaces it by Finalizer when it adopts a Runtime,
// and removes it with Finalizer at the end of a deletion.
const UpstreamFinalizer = "runtime-controller.infrastructure-manager.kyma-project.io/deletion-hook"

// Labels upstream puts on the objects it creates in a runtime cluster; the controller manages
// objects carrying them as its own.
const (
	// LabelUpstreamManagedBy marks upstream's OpenIDConnects (value infrastructure-manager).
	LabelUpstreamManagedBy = "operator.kyma-project.io/managed-by"
	// LabelUpstreamReconcilerManagedBy marks upstream's administrator bindings: value
	// infrastructure-manager on those upstream creates (admin-<random>, no other label),
	// reconciler on those its predecessor left, which upstream manages too.
	LabelUpstreamReconcilerManagedBy = "reconciler.kyma-project.io/managed-by"
	// upstreamManager is the value of both labels on what upstream creates.
	upstreamManager = "infrastructure-manager"
)

// FieldOwner is the field manager of everything the controller applies.
const FieldOwner = "infrastructure-manager"

// Labels the controller puts on the objects it creates, to find the Runtime again.
const (
	LabelRuntimeName      = infrav1.LabelRuntimeName
	LabelRuntimeNamespace = "infrastructuremanager.kyma-project.io/runtime-namespace"
	LabelManagedBy        = "infrastructuremanager.kyma-project.io/managed-by"
)

// Step names: the rows of the transition table.
const (
	StepInitialise            = "Initialise"
	StepApplyAuthentication   = "ApplyAuthentication"
	StepApplyShoot            = "ApplyShoot"
	StepWaitForShoot          = "WaitForShoot"
	StepEnsureGardenerCluster = "EnsureGardenerCluster"
	StepWaitForKubeconfig     = "WaitForKubeconfig"
	StepConfigureOIDC         = "ConfigureOIDC"
	StepConfigureCluster      = "ConfigureCluster"
	StepDeleteGardenerCluster = "DeleteGardenerCluster"
	StepDeleteShoot           = "DeleteShoot"
	StepWaitForShootDeletion  = "WaitForShootDeletion"
	StepDeleteAuthentication  = "DeleteAuthentication"
	StepRemoveFinalizer       = "RemoveFinalizer"
)

// Config holds what the steps need; NewMachine fills the defaults. Its knobs are the
// controller's Options and the EngineOptions both controllers share; the rest is wiring.
type Config struct {
	// Options are the controller's knobs (options.go).
	Options
	// EngineOptions are the knobs both controllers share: Retry is the retry policy of every
	// step; Setup passes the others to the engine and the controller.
	controller.EngineOptions
	// Client reaches the cluster the Runtimes live in.
	Client client.Client
	// Garden reaches the Gardener project; it is rate limited, and watched unless UnwatchedShoots.
	Garden Objects
	// GardenReader reads the Gardener project past the watch cache, whose shoots have no spec
	// to compare with the render (gardener.TrimShoot): ApplyShoot reads a shoot's spec from it
	// when its verdict does not stand. Nil reads through Garden.
	GardenReader client.Reader
	// GardenNamespace is the project namespace, garden-<project>.
	GardenNamespace string
	// Namespace is the namespace whose Runtimes the controller serves; the shoots of Runtimes
	// elsewhere in the project (another manager's) are ignored. Empty serves every namespace.
	Namespace string
	// Render holds the defaults of the render of a Runtime into a Shoot.
	Render gardener.RenderOptions
	// ACLConfigMap is the landscape's ConfigMap with the operators' and the control plane's
	// addresses, which every API server access list includes; an empty name turns ACLs off.
	ACLConfigMap types.NamespacedName
	// Kubeconfigs reads the runtimes' kubeconfig Secrets; Setup and NewMachine default it to
	// reading them through Client. The manager passes its watch of them.
	Kubeconfigs KubeconfigReader
	// Clusters connects to the runtimes' own clusters; Setup defaults it to CachedClusters over
	// Kubeconfigs, keeping RuntimeClientCacheSize clients.
	Clusters Clusters
	// Recorder records the writes of each pass over a Runtime (package shadow): Setup wraps the
	// reconciler and the runtime clusters' clients; Client and Garden come wrapped already.
	Recorder *shadow.Recorder
	// Series are the series the engine keeps about each Runtime (the metrics package's
	// Runtimes). Nil keeps none.
	Series *fsm.ObjectMetrics
	// Shadow makes the runtime clusters' connections a shadow's, which send nothing but reads
	// and dry runs; it needs Recorder.
	Shadow bool
}

// steps carries the configuration into the step functions.
type steps struct {
	Config
	// seeds keeps the seed lists of shoots created recently (nil: none).
	seeds *seedLists
	// seedRegions keeps the region of each seed read, by seed name (nil: none kept). A seed's
	// region does not change, so the provisioning info of a re-check costs no Gardener request.
	seedRegions *sync.Map
	// upstreamAdminsGone holds the Runtimes whose clusters hold no administrator binding of
	// upstream's any more, by key, with their uid (nil: none kept).
	upstreamAdminsGone *sync.Map
	// verdicts keeps on which inputs ApplyShoot, ApplyAuthentication and ConfigureCluster's
	// provisioning info last found nothing to write (nil: none kept).
	verdicts *verdicts
}

// NewMachine returns the Runtime controller's transition table.
func NewMachine(cfg Config) fsm.Machine[*infrav1.Runtime] {
	s := steps{Config: cfg, seeds: newSeedLists(cfg.SeedListTTL, time.Now), seedRegions: &sync.Map{}, upstreamAdminsGone: &sync.Map{}, verdicts: &verdicts{}}
	if s.Render.Namespace == "" {
		s.Render.Namespace = cfg.GardenNamespace
	}
	if s.Kubeconfigs == nil {
		s.Kubeconfigs = ReadKubeconfigSecrets(cfg.Client)
	}
	if s.PollInterval == 0 {
		s.PollInterval = DefaultPollInterval
	}
	return fsm.Machine[*infrav1.Runtime]{
		Name:     ControllerName,
		Start:    StepInitialise,
		Deletion: StepDeleteGardenerCluster,
		Steps: []fsm.Step[*infrav1.Runtime]{
			{Name: StepInitialise, Run: s.initialise, Next: []string{StepApplyAuthentication}},
			{Name: StepApplyAuthentication, Run: s.applyAuthentication, Next: []string{StepApplyShoot}},
			{Name: StepApplyShoot, Run: s.applyShoot, Next: []string{StepWaitForShoot}},
			{Name: StepWaitForShoot, Run: s.waitForShoot, Next: []string{StepEnsureGardenerCluster}, Deadline: cfg.ShootCreateDeadline},
			{Name: StepEnsureGardenerCluster, Run: s.ensureGardenerCluster, Next: []string{StepWaitForKubeconfig}},
			{Name: StepWaitForKubeconfig, Run: s.waitForKubeconfig, Next: []string{StepConfigureOIDC}, Deadline: cfg.KubeconfigDeadline},
			{Name: StepConfigureOIDC, Run: s.configureOIDC, Next: []string{StepConfigureCluster}},
			{Name: StepConfigureCluster, Run: s.configureCluster},
			{Name: StepDeleteGardenerCluster, Run: s.deleteGardenerCluster, Next: []string{StepDeleteShoot}},
			{Name: StepDeleteShoot, Run: s.deleteShoot, Next: []string{StepWaitForShootDeletion, StepDeleteAuthentication}},
			{Name: StepWaitForShootDeletion, Run: s.waitForShootDeletion, Next: []string{StepDeleteAuthentication}, Deadline: cfg.ShootDeleteDeadline},
			{Name: StepDeleteAuthentication, Run: s.deleteAuthentication, Next: []string{StepRemoveFinalizer}},
			{Name: StepRemoveFinalizer, Run: s.removeFinalizer},
		},
		DefaultPolicy: cfg.Retry,
	}
}

// gardenerClusterName is the name of the GardenerCluster and of its kubeconfig Secret: one per
// runtime id, as upstream names them.
func gardenerClusterName(rt *infrav1.Runtime) string {
	return rt.Labels[infrav1.LabelRuntimeID]
}

func kubeconfigSecretName(rt *infrav1.Runtime) string {
	return gardenercluster.SecretName(rt.Labels[infrav1.LabelRuntimeID])
}
