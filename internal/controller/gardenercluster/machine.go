package gardenercluster

import (
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller"
	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// ControllerName names the GardenerCluster controller in metrics and events.
const ControllerName = "gardenercluster"

// StepEnsureKubeconfig is the controller's one step.
const StepEnsureKubeconfig = "EnsureKubeconfig"

// Annotations on the kubeconfig Secret.
const (
	AnnotationExpiresAt = "infrastructuremanager.kyma-project.io/kubeconfig-expires-at"
	AnnotationIssuedAt  = "infrastructuremanager.kyma-project.io/kubeconfig-issued-at"
	// AnnotationShoot and AnnotationShootUID name the shoot the kubeconfig was issued for.
	AnnotationShoot    = "infrastructuremanager.kyma-project.io/kubeconfig-shoot"
	AnnotationShootUID = "infrastructuremanager.kyma-project.io/kubeconfig-shoot-uid"
)

// Config holds what the controller needs. Its knobs are the controller's Options and the
// EngineOptions both controllers share; the rest is wiring.
type Config struct {
	// Options are the controller's knobs (options.go).
	Options
	// EngineOptions are the knobs both controllers share: Retry is the retry policy of the step;
	// Setup passes the others to the engine and the controller.
	controller.EngineOptions
	// Client reaches the cluster the GardenerClusters and Secrets live in.
	Client client.Client
	// Kubeconfigs issues the shoots' admin kubeconfigs: GardenKubeconfigs in the manager.
	Kubeconfigs Kubeconfigs
	// Clock tells the time; tests use a fake one.
	Clock clock.PassiveClock
	// Recorder records the writes of each pass over a GardenerCluster (package shadow); Client
	// and Kubeconfigs come wrapped already.
	Recorder *shadow.Recorder
}

// NewMachine returns the GardenerCluster controller's transition table.
func NewMachine(cfg Config) fsm.Machine[*infrav1.GardenerCluster] {
	if cfg.KubeconfigLifetime == 0 {
		cfg.KubeconfigLifetime = DefaultKubeconfigLifetime
	}
	if cfg.KubeconfigRotateAfter == 0 {
		cfg.KubeconfigRotateAfter = DefaultKubeconfigRotateAfter
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	k := kubeconfigs{cfg}
	return fsm.Machine[*infrav1.GardenerCluster]{
		Name:          ControllerName,
		Start:         StepEnsureKubeconfig,
		Steps:         []fsm.Step[*infrav1.GardenerCluster]{{Name: StepEnsureKubeconfig, Run: k.ensure}},
		DefaultPolicy: cfg.Retry,
	}
}
